package overlay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

// Writes and deletes through the overlay are seen through it, in listing
// order, and never reach the base.
func TestOverlayNeverChangesBase(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a", "c", "d/e"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	ctx := context.Background()
	o := New(base)
	if err := o.Delete(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.PutIf(ctx, o, "b", []byte("bb"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Put(ctx, "a", bytes.NewReader([]byte("AAA")), 3, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	o.List(ctx, "", func(i storage.Info) error { got = append(got, i.Path); return nil })
	if strings.Join(got, ",") != "a,b,d/e" {
		t.Errorf("list %v", got)
	}
	if _, err := o.Stat(ctx, "c"); err == nil {
		t.Error("c deleted through the overlay still exists in it")
	}
	if data, _, _ := o.Get(ctx, "a"); string(data) != "AAA" {
		t.Errorf("a = %q", data)
	}
	for p, want := range map[string]string{"a": "a", "c": "c"} {
		if data, _ := os.ReadFile(filepath.Join(dir, p)); string(data) != want {
			t.Errorf("base %s = %q, want %q", p, data, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
		t.Error("b reached the base")
	}
}
