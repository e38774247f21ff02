package local_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// lapsed is a context whose fence has lapsed but whose Done channel is not
// closed yet: the lock's Err checks the fence synchronously, before its
// timer cancels the context (a process resumed after a pause).
type lapsed struct{ context.Context }

var errLapsed = errors.New("fence lapsed")

func (lapsed) Err() error { return errLapsed }

// watching is a source that notes whether the write's parent directory
// was on the root when the copy began (after the temporary file's create).
type watching struct {
	dir  string
	read bool
	seen bool
}

func (w *watching) Read(p []byte) (int, error) {
	if !w.read {
		w.read = true
		_, err := os.Lstat(w.dir)
		w.seen = err == nil
	}
	return copy(p, "x"), io.EOF
}

// TestLapsedFenceCreatesNoParent: a write under a lapsed fence changes
// nothing at the root, not even for a moment the parent directory its
// temporary file would need (dirstore.Writer.begin checks ctx.Err, not only
// Done; the refused write's cleanup would remove it again, too late for a
// successor that saw it).
func TestLapsedFenceCreatesNoParent(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, root)
	src := &watching{dir: filepath.Join(root, "new")}
	_, err := s.Put(lapsed{t.Context()}, "new/dir/f.txt", src, 1, storage.PutOptions{})
	if !errors.Is(err, errLapsed) {
		t.Fatalf("put under a lapsed fence: %v, want the fence's error", err)
	}
	if src.read || src.seen {
		t.Errorf("the write went on under a lapsed fence: source read %v, parent directory created %v", src.read, src.seen)
	}
	if _, err := os.Lstat(src.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the parent directory exists after the refused write (%v)", err)
	}
}
