package txn

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

// TestCatalogEditDiskFull: the new catalog does not fit on the disk (a real
// tmpfs, filled up): the write fails with ENOSPC, the old catalog stays as
// it was and the temporary file is gone. Needs root and mount(2) (CI has
// both); skips otherwise.
func TestCatalogEditDiskFull(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root and mount permission): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, e := baseCatalog(150) // about 100 KB
	old := mustEncode(t, c)
	v, err := storage.PutIf(context.Background(), st, catalog.FileName, old, "")
	if err != nil {
		t.Fatal(err)
	}
	// Fill the rest, leaving room for half a catalog.
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		var fs syscall.Statfs_t
		if err := syscall.Statfs(dir, &fs); err != nil {
			t.Fatal(err)
		}
		if int64(fs.Bavail)*int64(fs.Bsize) <= int64(len(old))/2 {
			break
		}
		if _, err := filler.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	filler.Close()
	tx := begin(t, st, nil)
	_, err = tx.Apply(&Change{Base: v, BaseCanonical: true, Final: e})
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("catalog write onto a full disk: %v, want ENOSPC", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, catalog.FileName)); !bytes.Equal(got, old) {
		t.Fatal("the old catalog changed")
	}
	if temps, err := st.SweepTemp(context.Background(), storage.SweepOptions{DryRun: true}); err != nil || len(temps) != 0 {
		t.Errorf("temporary files after the failed write: %v %v", temps, err)
	}
}
