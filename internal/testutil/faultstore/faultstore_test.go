package faultstore_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/testutil/faultstore"
)

// TestSyncAndSweepPassThrough: a wrapper no longer hides Sync and
// SweepTemp, and neither counts as a mutating call.
func TestSyncAndSweepPassThrough(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	st, err := local.NewDeferred(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fs := faultstore.New(st, 2, true)
	if _, err := fs.Put(ctx, "a/x", strings.NewReader("x"), 1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	tmp := "a/" + storage.TempPrefix + "crash"
	if err := os.WriteFile(filepath.Join(root, "a", storage.TempPrefix+"crash"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var s storage.Store = fs
	if err := s.Sync(ctx); err != nil {
		t.Errorf("Sync: %v", err)
	}
	for _, opts := range []storage.SweepOptions{{DryRun: true}, {Dirs: []string{"a"}}} {
		if found, err := s.SweepTemp(ctx, opts); err != nil || !slices.Equal(found, []string{tmp}) {
			t.Errorf("SweepTemp(%+v) = %q, %v; want %q", opts, found, err, tmp)
		}
	}
	if n := fs.Calls(); n != 1 {
		t.Errorf("%d mutating calls counted, want 1 (the Put)", n)
	}
	// The next mutating call is the one that fails.
	if err := fs.Delete(ctx, "a/x"); err == nil {
		t.Error("the second mutating call did not fail")
	}
}
