//go:build linux

package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestDiskFull publishes to a root on a real 512 KiB tmpfs with a bundle
// that does not fit: the run fails with ENOSPC part-way through its writes,
// and the cleanup (which itself needs room for the catalog) leaves the root
// as the invariants demand: the catalog truthful, no orphan, no temporary
// file, no journal, unmanaged content untouched. A bundle that fits then
// publishes. Needs root and mount(2) (CI has both); skips otherwise.
func TestDiskFull(t *testing.T) {
	f := newFixture(t, "replacement")
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", f.root, "tmpfs", 0, "size=512k"); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root and mount permission): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(f.root, syscall.MNT_DETACH) })

	f.bundle("mine", "mine.one", map[string]string{"keep.txt": "keep", "change.txt": "v1", "drop.txt": "drop"})
	if d := f.run(f.app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("setup run: %s %s", d.Status, str(d.Error))
	}
	if err := os.WriteFile(filepath.Join(f.root, "hand.txt"), []byte("hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 200<<10)
	f.bundle("mine", "mine.two", map[string]string{"keep.txt": "keep", "change.txt": "v2",
		"big/1.bin": big + "1", "big/2.bin": big + "2", "big/3.bin": big + "3", "big/4.bin": big + "4"})
	pristine := storagetest.DirSnapshot(t, f.root)
	st, err := local.New(f.root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r0, err := ReadRoot(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}

	d := f.run(f.app(nil), "mine")
	if d.Status != report.StatusFailed || !strings.Contains(str(d.Error), "no space left on device") {
		t.Fatalf("run onto a full disk: %s %s", d.Status, str(d.Error))
	}
	t.Logf("failed as expected: %s", str(d.Error))
	checkInvariants(t, f.root, pristine, r0.State.Catalog, []string{"hand.txt"})
	if temps, err := st.SweepTemp(context.Background(), storage.SweepOptions{DryRun: true}); err != nil || len(temps) != 0 {
		t.Errorf("temporary files after the failed run: %v %v", temps, err)
	}
	if _, err := os.Stat(filepath.Join(f.root, journal.Name)); err == nil {
		t.Errorf("the journal stayed although the cleanup could settle the root")
	}

	f.bundle("mine", "mine.three", map[string]string{"keep.txt": "keep", "change.txt": "v3", "small.bin": big})
	if d := f.run(f.app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("a bundle that fits after the failure: %s %s", d.Status, str(d.Error))
	}
	c := checkInvariants(t, f.root, pristine, &catalog.Catalog{}, []string{"hand.txt"})
	if got := strings.Join(paths(c), ","); got != "change.txt,keep.txt,small.bin" {
		t.Errorf("converged to %s", got)
	}
}
