package sftp

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// Walk implements dirstore.FS: the tree on the current connection, watched.
func (d dirFS) Walk(ctx context.Context, _ bool) (dirstore.Tree, func(), error) {
	c, err := d.client(ctx)
	if err != nil {
		return nil, nil, err
	}
	return tree{d.Store, c}, watch(ctx, c), nil
}

// tree is the store's directory tree on the connection c, as
// dirstore.ListTree and dirstore.SweepTree walk it.
type tree struct {
	s *Store
	c *conn
}

// OpenDir implements dirstore.Tree: the directory and its parents must be
// plain directories (checked with Lstat, never following a link).
func (t tree) OpenDir(_ context.Context, p string) (dirstore.TreeDir, error) {
	if p != "" {
		_, err := t.s.walkParents(t.c, p+"/x", false) // p itself and its parents
		if h := (*dirstore.HiddenError)(nil); errors.As(err, &h) || errors.Is(err, fs.ErrNotExist) || t.s.belowFile(t.c, p+"/x", err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return dir{t.c, t.s.full(p)}, nil
}

// PruneDir implements dirstore.Tree (see dirstore.Dirs.Prune).
func (t tree) PruneDir(_ context.Context, p string, parents bool) {
	t.s.dirs.Prune(t.s.full(p), parents, false, t.c.sftp.RemoveDirectory)
}

// dir is a directory of the tree: its server path on the connection c.
type dir struct {
	c    *conn
	path string
}

// Entries implements dirstore.TreeDir: READDIR returns each entry's own
// attributes (lstat's), so links are seen as links and never followed.
func (d dir) Entries(ctx context.Context, prefix string) ([]fs.FileInfo, error) {
	fis, err := d.c.sftp.ReadDirContext(ctx, d.path)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(fis, func(fi fs.FileInfo) bool {
		return fi.Name() == "." || fi.Name() == ".." || !strings.HasPrefix(fi.Name(), prefix)
	}), nil
}

// Sub implements dirstore.TreeDir.
func (d dir) Sub(_ context.Context, name string) (dirstore.TreeDir, error) {
	return dir{d.c, path.Join(d.path, name)}, nil
}

// Remove implements dirstore.TreeDir.
func (d dir) Remove(_ context.Context, name string) error {
	return d.c.sftp.Remove(path.Join(d.path, name))
}

// Close implements dirstore.TreeDir.
func (dir) Close() {}
