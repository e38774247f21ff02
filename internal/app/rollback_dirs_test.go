package app

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// collideAtCommit is another writer: right after the run staged path, it
// creates that path in the root (the directory dir of this machine), so
// that the run's create-only commit of it finds the name taken, after the
// run's earlier phases were committed.
type collideAtCommit struct {
	storage.Store
	t         *testing.T
	dir, path string
}

func (c collideAtCommit) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	g, err := c.Store.Stage(ctx, p, r, size, opts)
	if err == nil && p == c.path {
		storagetest.WriteFile(c.t, filepath.Join(c.dir, filepath.FromSlash(p)), "theirs")
	}
	return g, err
}

// TestRollbackKeepsExistingDirs (#21.3): a root with empty directories an
// operator made (mkdir -p root/img root/uploads) and a run whose images
// land in them and whose page then collides at its commit: the rollback
// removes the images and the directory the run created below uploads/,
// and leaves img/ and uploads/, which were there before the run, on local
// disk and SFTP (the in-process server and the real sshd).
func TestRollbackKeepsExistingDirs(t *testing.T) {
	backends := []struct {
		name string
		// open returns a fresh directory of this machine for the root and
		// a function that opens a store on it, as a run does.
		open func(t *testing.T) (string, func(ctx context.Context) (storage.Store, error))
	}{
		{"local", func(t *testing.T) (string, func(context.Context) (storage.Store, error)) {
			dir := t.TempDir()
			return dir, func(context.Context) (storage.Store, error) { return local.NewDeferred(dir) }
		}},
		{"sftp-inprocess", func(t *testing.T) (string, func(context.Context) (storage.Store, error)) {
			l := sftptest.Start(t).Login()
			return l.Root, func(ctx context.Context) (storage.Store, error) { return sftp.New(ctx, sftpOptions(l)) }
		}},
		{"sftp-sshd", func(t *testing.T) (string, func(context.Context) (storage.Store, error)) {
			l := sftptest.SSHD(t).FreshRoot(t)
			return l.Root, func(ctx context.Context) (storage.Store, error) { return sftp.New(ctx, sftpOptions(l)) }
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			dir, open := b.open(t)
			for _, d := range []string{"img", "uploads"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			f := newFixture(t, "additive")
			f.bundle("mine", "mine.one", map[string]string{
				"img/chart.svg": "<svg/>", "uploads/2026/data.csv": "a,b\n", "report.md": "# Report\n\n![chart](img/chart.svg)\n",
			})
			a := f.app(nil)
			a.Open = func(ctx context.Context, _ *config.Destination, _ string) (storage.Store, error) {
				st, err := open(ctx)
				if err != nil {
					return nil, err
				}
				return collideAtCommit{Store: st, t: t, dir: dir, path: "report.html"}, nil
			}
			d := f.run(a, "mine")
			if d.Status != report.StatusFailed || !strings.Contains(str(d.Error), "report.html") {
				t.Fatalf("run whose page collides at its commit: %s %s", d.Status, str(d.Error))
			}
			t.Logf("failed as expected: %s", str(d.Error))
			// Left: the directories that were there, and the other
			// writer's page; the run's files, the directory it made
			// (uploads/2026), its journal and temporary files are gone.
			want := []string{"img", "report.html", "uploads"}
			if got := storagetest.DirEntries(t, dir); !slices.Equal(got, want) {
				t.Errorf("root after the rollback:\n got %q\nwant %q", got, want)
			}
			if data, err := os.ReadFile(filepath.Join(dir, "report.html")); err != nil || string(data) != "theirs" {
				t.Errorf("the other writer's report.html: %q %v", data, err)
			}
		})
	}
}
