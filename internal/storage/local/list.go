package local

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// Walk implements dirstore.FS. List reports regular files whose names the
// other methods reject with storage.ErrInvalidPath (say, containing a
// backslash).
func (d dirFS) Walk(context.Context, bool) (dirstore.Tree, func(), error) {
	return tree{d.Store}, func() {}, nil
}

// tree is the store's directory tree as dirstore.ListTree and SweepTree walk it.
type tree struct{ s *Store }

// OpenDir implements dirstore.Tree: the directory is reached as a
// reader's chain reaches it (no symbolic link, plain directories).
func (t tree) OpenDir(_ context.Context, p string) (dirstore.TreeDir, error) {
	root, err := t.s.openRoot(false)
	if err != nil || root == nil {
		return nil, err
	}
	if p == "" {
		return &dir{r: root}, nil
	}
	c, err := readChain(root, p+"/x") // the chain of "p/x" ends at p
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &dir{r: c.parent(), c: c}, nil
}

// PruneDir implements dirstore.Tree (see Store.removeDir and Store.prune).
func (t tree) PruneDir(ctx context.Context, p string, parents bool) {
	d, _ := t.OpenDir(ctx, p)
	if d == nil {
		return
	}
	c := d.(*dir).c
	defer c.close()
	if parents {
		t.s.prune(c, false)
		return
	}
	n := len(c.roots) - 1
	t.s.removeDir(c.roots[n-1], c.segs[n-1], p)
}

// dir is an open directory of the tree: r, reached by the chain c (nil
// for the store root, which the Store owns).
type dir struct {
	r     *os.Root
	c     *chain
	owned bool // r was opened by Sub and is closed with the dir
}

// Entries implements dirstore.TreeDir.
func (d *dir) Entries(_ context.Context, prefix string) ([]fs.FileInfo, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	fis := make([]fs.FileInfo, 0, len(names))
	for _, name := range names {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		fi, err := d.r.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		fis = append(fis, fi)
	}
	return fis, nil
}

// Sub implements dirstore.TreeDir.
func (d *dir) Sub(_ context.Context, name string) (dirstore.TreeDir, error) {
	r, err := d.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &dir{r: r, owned: true}, nil
}

// Remove implements dirstore.TreeDir.
func (d *dir) Remove(_ context.Context, name string) error { return d.r.Remove(name) }

// Close implements dirstore.TreeDir.
func (d *dir) Close() {
	switch {
	case d.c != nil:
		d.c.close()
	case d.owned:
		d.r.Close()
	}
}
