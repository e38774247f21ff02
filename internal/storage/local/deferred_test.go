package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// TestDeferredSync: a deferred store records the directories its Puts
// changed and Sync fsyncs them (and forgets them); the objects are in place
// either way.
func TestDeferredSync(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := NewDeferred(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, p := range []string{"a.txt", "x/y/b.txt", "x/c.txt"} {
		if _, err := st.Put(ctx, p, strings.NewReader("data"), 4, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st.dirtyMu.Lock()
	got := len(st.dirty)
	st.dirtyMu.Unlock()
	if got != 3 { // "", "x", "x/y"
		t.Errorf("%d dirty directories recorded, want 3", got)
	}
	if err := st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if len(st.dirty) != 0 {
		t.Errorf("Sync left %d directories recorded", len(st.dirty))
	}
	for _, p := range []string{"a.txt", "x/y/b.txt", "x/c.txt"} {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != "data" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	plain, _ := New(t.TempDir())
	defer plain.Close()
	if err := plain.Sync(ctx); err != nil {
		t.Errorf("Sync on a plain store: %v", err)
	}
}
