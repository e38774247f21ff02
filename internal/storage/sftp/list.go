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
	return dir{d.Store, c, d.root}, watch(ctx, c), nil
}

// dir is the store's directory tree on the connection c, as
// dirstore.ListTree and dirstore.SweepTree walk it, and its directory at
// the server path path.
type dir struct {
	s    *Store
	c    *conn
	path string
}

// OpenDir implements dirstore.Tree: the directory and its parents must be
// plain directories (checked with Lstat, never following a link).
func (d dir) OpenDir(_ context.Context, p string) (dirstore.TreeDir, error) {
	if p != "" {
		_, err := d.s.walkParents(d.c, p+"/x", false) // p itself and its parents
		if h := (*dirstore.HiddenError)(nil); errors.As(err, &h) || errors.Is(err, fs.ErrNotExist) || d.s.belowFile(d.c, p+"/x", err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return dir{d.s, d.c, d.s.full(p)}, nil
}

// PruneDir implements dirstore.Tree (see dirstore.Dirs.Prune).
func (d dir) PruneDir(_ context.Context, p string, parents bool) {
	d.s.dirs.Prune(d.s.full(p), parents, false, d.c.sftp.RemoveDirectory)
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
	return dir{d.s, d.c, path.Join(d.path, name)}, nil
}

// Remove implements dirstore.TreeDir.
func (d dir) Remove(_ context.Context, name string) error {
	return d.c.sftp.Remove(path.Join(d.path, name))
}

// Close implements dirstore.TreeDir.
func (dir) Close() {}
