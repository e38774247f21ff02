package sftp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// List implements storage.Store with dirstore.ListTree, never following a
// symbolic link.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return storage.ListResult(s.list(ctx, prefix, fn), func(err error) error {
		return s.errorf("list", strconv.Quote(prefix), err)
	})
}

func (s *Store) list(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	return dirstore.ListTree(ctx, tree{s, c}, prefix, fn)
}

// SweepTemp implements storage.Store with dirstore.SweepTree, never
// following a symbolic link. It waits for this Store's in-flight writes,
// but cannot see other processes' writes: call it (without DryRun) only
// while holding the destination lock, as part of crash recovery.
func (s *Store) SweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	found, err := s.sweepTemp(ctx, opts)
	if err != nil {
		return found, fmt.Errorf("%s: sweep temporary files: %w", s, err)
	}
	return found, nil
}

func (s *Store) sweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	if _, err := storage.CheckSweepDirs(opts.Dirs); err != nil {
		return nil, err
	}
	c, err := s.client(ctx)
	if err != nil {
		return nil, err
	}
	defer watch(ctx, c)()
	defer s.dw.Exclusive()()
	return dirstore.SweepTree(ctx, tree{s, c}, opts)
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
		err := t.s.checkParents(t.c, p+"/x") // p itself and its parents
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
