//go:build unix

package app

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestNonObjectAtPlannedPathIsUnmanaged (spec section 5): on a root with no
// catalog, a symbolic link (to a file, to a directory), a FIFO or a
// directory holding only a link, where a file is planned, is unmanaged
// content at a planned path: the plan says fail_unmanaged and nothing is
// written, on local disk and on SFTP.
func TestNonObjectAtPlannedPathIsUnmanaged(t *testing.T) {
	plants := map[string]func(dir, p string) error{
		"link to a file": func(dir, p string) error { return os.Symlink(filepath.Join(dir, "elsewhere.txt"), p) },
		"link to a dir":  func(dir, p string) error { return os.Symlink(dir, p) },
		"fifo":           func(_, p string) error { return syscall.Mkfifo(p, 0o644) },
		"dir of a link": func(dir, p string) error {
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
			return os.Symlink(dir, filepath.Join(p, "l"))
		},
	}
	backends := map[string]func(t *testing.T) (string, func(context.Context) (storage.Store, error)){
		"local": func(t *testing.T) (string, func(context.Context) (storage.Store, error)) {
			dir := t.TempDir()
			return dir, func(context.Context) (storage.Store, error) { return local.New(dir) }
		},
		"sftp-inprocess": func(t *testing.T) (string, func(context.Context) (storage.Store, error)) {
			l := sftptest.Start(t).Login()
			return l.Root, func(ctx context.Context) (storage.Store, error) { return sftp.New(ctx, sftpOptions(l)) }
		},
	}
	for bname, backend := range backends {
		for pname, plant := range plants {
			t.Run(bname+"/"+pname, func(t *testing.T) {
				root, open := backend(t)
				outside := t.TempDir()
				storagetest.WriteFile(t, filepath.Join(outside, "elsewhere.txt"), "outside")
				if err := os.MkdirAll(root, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := plant(outside, filepath.Join(root, "a.txt")); err != nil {
					t.Skipf("planting %s: %v", pname, err)
				}
				before := storagetest.DirEntries(t, root)
				f := newFixture(t, "additive")
				f.bundle("mine", "mine.one", map[string]string{"a.txt": "a", "b.txt": "b"})
				a := f.app(nil)
				a.Open = func(ctx context.Context, _ *config.Destination, _ string) (storage.Store, error) { return open(ctx) }
				d := f.run(a, "mine")
				if d.Action != "fail_unmanaged" || !slices.Equal(d.Unmanaged, []string{"a.txt"}) {
					t.Errorf("run: action %s, unmanaged %q, status %s, error %s; want fail_unmanaged naming a.txt", d.Action, d.Unmanaged, d.Status, str(d.Error))
				}
				if got := storagetest.DirEntries(t, root); !slices.Equal(got, before) {
					t.Errorf("the run wrote to the root:\n got %q\nwant %q", got, before)
				}
			})
		}
	}
}
