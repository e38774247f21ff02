package local_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/storage"
)

// copySpy passes a bundle file's verifying reader to the store, noting that
// the store copied it in the kernel (CopiedBy), and calls after once, after
// the first Read (the first buffer copied).
type copySpy struct {
	r      io.Reader
	copied bool
	after  func()
}

func (c *copySpy) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.after != nil {
		c.after()
		c.after = nil
	}
	return n, err
}

func (c *copySpy) CopiedBy(copy io.Reader) *os.File {
	c.copied = true
	return c.r.(interface{ CopiedBy(io.Reader) *os.File }).CopiedBy(copy)
}

// TestBundleFileCopiedInTheKernel: a bundle file is copied with
// copy_file_range and verified from the temporary file's own bytes (P1):
// the copy lands whole, and a file rewritten in place during the copy
// (same size, after the first buffer) fails the write with the bundle's
// sha256 mismatch, leaving neither the target nor a temporary file.
func TestBundleFileCopiedInTheKernel(t *testing.T) {
	ctx := t.Context()
	src := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: several copy buffers
	name := filepath.Join(src, "big.bin")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Seal(ctx, src, "copy.test", time.Now()); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Load(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	root := t.TempDir()
	s := newStore(t, root)
	put := func(p string, after func()) (*copySpy, error) {
		r, err := b.OpenVerified("big.bin")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		spy := &copySpy{r: r, after: after}
		_, err = s.Put(ctx, p, spy, int64(len(data)), storage.PutOptions{Mode: storage.PutCreate})
		return spy, err
	}

	spy, err := put("a/whole.bin", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !spy.copied {
		t.Error("the bundle file was not copied in the kernel")
	}
	if got := readFile(t, root, "a/whole.bin"); got != string(data) {
		t.Errorf("copied %d bytes differ from the bundle file's %d", len(got), len(data))
	}

	spy, err = put("a/changed.bin", func() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(bytes.ToUpper(data[len(data)/2:]), int64(len(data)/2)); err != nil {
			t.Fatal(err)
		}
	})
	var mm *bundle.MismatchError
	if !errors.As(err, &mm) || !strings.Contains(mm.Reason, "sha256 mismatch") {
		t.Fatalf("a file rewritten during the copy: got %v, want a sha256 mismatch", err)
	}
	if !spy.copied {
		t.Error("the rewritten bundle file was not copied in the kernel")
	}
	if exists(filepath.Join(root, "a", "changed.bin")) {
		t.Error("the rewritten bytes were published")
	}
	if tmp := tempFiles(t, root); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}
