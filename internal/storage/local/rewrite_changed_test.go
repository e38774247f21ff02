package local_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// TestRewriteIfRefusesBytesChangedSinceRead: a rewrite against the Version
// ReadVersioned read (the plan's read of the catalog) proves the bytes it
// splices are that Version's: it refuses a file changed since in place,
// same size, one byte different,
// wherever the byte is: in what fn reads, or in what it leaves for the
// drain. The unchanged bytes, written again, are accepted.
func TestRewriteIfRefusesBytesChangedSinceRead(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := newStore(t, dir)
	orig := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16) // several read buffers
	put(t, s, "cat.json", string(orig))
	v, err := s.ReadVersioned(ctx, "cat.json", func(r io.Reader) error {
		_, err := io.CopyN(io.Discard, r, 100) // the rest is drained
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	copyAll := func(cur io.Reader, w io.Writer) error {
		_, err := io.Copy(w, cur)
		return err
	}
	firstOnly := func(cur io.Reader, w io.Writer) error {
		_, err := io.CopyN(w, cur, 10)
		return err
	}
	file := filepath.Join(dir, "cat.json")
	for _, at := range []int{0, 50, len(orig) / 2, len(orig) - 1} {
		for name, fn := range map[string]func(io.Reader, io.Writer) error{"copy": copyAll, "first": firstOnly} {
			changed := bytes.Clone(orig)
			changed[at] ^= 1
			if err := os.WriteFile(file, changed, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.RewriteIf(ctx, "cat.json", v, fn); !errors.Is(err, storage.ErrPrecondition) {
				t.Fatalf("byte %d changed, %s: RewriteIf = %v, want ErrPrecondition", at, name, err)
			}
			if got, _ := os.ReadFile(file); !bytes.Equal(got, changed) {
				t.Fatalf("byte %d changed, %s: the refused rewrite changed the file", at, name)
			}
		}
	}
	if temps := tempFiles(t, dir); len(temps) != 0 {
		t.Errorf("temporary files after refused rewrites: %v", temps)
	}
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.RewriteIf(ctx, "cat.json", v, firstOnly); err != nil {
		t.Fatalf("the bytes read, rewritten: %v", err)
	}
	if got, _ := os.ReadFile(file); string(got) != "0123456789" {
		t.Errorf("after the rewrite: %d bytes, want the 10 fn wrote", len(got))
	}
}
