package app

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
)

// TestSFTPServerIgnoringExclusiveIsRefused: an SFTP server that announces
// hardlink@openssh.com but answers it "operation unsupported", and that
// ignores O_EXCL (as rclone serve sftp was seen to), is refused before
// anything is written: the adapter falls back to O_EXCL, which the probe
// then finds unenforced. With single_writer: true the run publishes, and
// warns.
func TestSFTPServerIgnoringExclusiveIsRefused(t *testing.T) {
	srv := sftptest.Start(t, sftptest.WithQuirks(sftptest.Quirks{HardlinkUnsupported: true, IgnoreExclusive: true}))
	opts := sftpOptions(srv.Login())

	for _, single := range []bool{false, true} {
		yaml := "pipelines:\n  - {id: mine, source: mine, destinations: [site]}\ndestinations:\n  - {id: site, backend: local, path: www"
		if single {
			yaml += ", single_writer: true"
		}
		f := yamlFixture(t, yaml+"}\n")
		f.bundle("mine", "mine.one", map[string]string{"a.txt": "a", "b/c.txt": "c"})
		var logs bytes.Buffer
		a := New("test", slog.New(slog.NewTextHandler(&logs, nil)))
		a.Open = func(ctx context.Context, _ *config.Destination, _ string) (storage.Store, error) {
			return sftp.New(ctx, opts) // the config's local path is replaced by the SFTP root
		}
		d := f.run(a, "mine")
		if !single {
			msg := str(d.Error)
			if d.Status == report.StatusOK || !strings.Contains(msg, "does not enforce exclusive create") || !strings.Contains(msg, "single_writer") {
				t.Fatalf("run against a server that ignores O_EXCL: %s %s", d.Status, msg)
			}
			t.Logf("refused: %s", msg)
			if got := rootEntries(t, opts.Root); len(got) != 0 {
				t.Fatalf("refused run left %q at the root", got)
			}
			continue
		}
		if d.Status != report.StatusOK {
			t.Fatalf("single_writer run: %s %s", d.Status, str(d.Error))
		}
		if !strings.Contains(logs.String(), "does not enforce conditional writes") {
			t.Errorf("no warning on a single_writer run against an unproven server: %s", logs.String())
		}
		for p, want := range map[string]string{"a.txt": "a", "b/c.txt": "c"} {
			if got, err := os.ReadFile(filepath.Join(opts.Root, p)); err != nil || string(got) != want {
				t.Errorf("%s = %q, %v; want %q", p, got, err, want)
			}
		}
	}
}

// rootEntries returns every entry below root (directories too), relative;
// none if root does not exist.
func rootEntries(t *testing.T, root string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return filepath.SkipDir
		}
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		got = append(got, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}
