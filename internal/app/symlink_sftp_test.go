package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestSymlinkedParentOnSFTP: an SFTP server follows symbolic links in the
// middle of a path. A recorded output's directory replaced by a link to a
// directory outside the root, holding unrelated files of the same names,
// must not let run (its writes, its failure cleanup) or prune --apply
// change anything outside the root. Against the in-process server and the
// real sshd.
func TestSymlinkedParentOnSFTP(t *testing.T) {
	servers := map[string]func(t *testing.T) sftptest.Login{
		"inprocess": func(t *testing.T) sftptest.Login { return sftptest.Start(t).Login() },
		"sshd":      func(t *testing.T) sftptest.Login { return sftptest.SSHD(t).FreshRoot(t) },
	}
	for name, server := range servers {
		t.Run(name, func(t *testing.T) {
			login := server(t)
			opts, root := sftpOptions(login), login.Root
			f := yamlFixture(t, `pipelines:
  - {id: mine, source: mine, destinations: [site]}
destinations:
  - id: site
    backend: local
    path: www
    workflow: replacement
    retention: {prune: {older_than: 1s, keep_min: 0}}
`)
			cfg := f.cfg
			now := time.Date(2026, 6, 20, 8, 0, 0, 0, time.UTC)
			a := New("test", nil)
			a.Now = func() time.Time { return now }
			a.Open = func(ctx context.Context, d *config.Destination, _ string) (storage.Store, error) {
				return sftp.New(ctx, opts) // the config's local path is replaced by the SFTP root
			}
			f.bundle("mine", "mine.one", map[string]string{"d0/a.txt": "mine a", "d0/b.txt": "mine b", "top.txt": "top"})
			if d := f.run(a, "mine"); d.Status != report.StatusOK {
				t.Fatalf("first run: %s %v", d.Status, str(d.Error))
			}
			// The attack: d0 becomes a link to a directory outside the root
			// holding unrelated files with the same names.
			outside := t.TempDir()
			for n, c := range map[string]string{"a.txt": "OUTSIDE a", "b.txt": "OUTSIDE b", "keep.txt": "OUTSIDE keep"} {
				if err := os.WriteFile(filepath.Join(outside, n), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.RemoveAll(filepath.Join(root, "d0")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(root, "d0")); err != nil {
				t.Fatal(err)
			}
			before := storagetest.DirSnapshot(t, outside)

			// A run that writes through d0 (new bytes, a new file, and a
			// replacement that deletes b.txt) fails and leaves outside alone.
			f.bundle("mine", "mine.two", map[string]string{"d0/a.txt": "mine a2", "d0/c.txt": "mine c", "top.txt": "top2"})
			d := f.run(a, "mine")
			if d.Status == report.StatusOK {
				t.Fatalf("run through a symlinked directory succeeded")
			}
			if !strings.Contains(str(d.Error), "d0 is a symbolic link (never followed)") {
				t.Errorf("run error does not name the link: %s", str(d.Error))
			}
			if diff := cmp.Diff(before, storagetest.DirSnapshot(t, outside)); diff != "" {
				t.Errorf("run changed files outside the root (-before +after):\n%s", diff)
			}

			// prune --apply selects every output (older than 1s a day
			// later) and must not delete through the link either.
			now = now.Add(24 * time.Hour)
			rep, err := a.Prune(context.Background(), cfg, PruneOptions{Root: Root{Pipeline: "mine", Destination: "site"}, Apply: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Selected) == 0 {
				t.Fatalf("prune selected nothing: %+v", rep)
			}
			if diff := cmp.Diff(before, storagetest.DirSnapshot(t, outside)); diff != "" {
				t.Errorf("prune --apply changed files outside the root (-before +after):\n%s", diff)
			}
		})
	}
}
