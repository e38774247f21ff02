package sftp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"

	sftplib "github.com/pkg/sftp"

	"github.com/distributor-dev/distributor/internal/storage"
)

// List implements storage.Store. It walks the tree below the root without
// following symbolic links and calls fn, in the caller's goroutine, for
// every regular file whose path starts with prefix, in byte-wise order of
// the full path. Symbolic links, directories, special files and temporary
// files (storage.TempPrefix) are skipped. A missing root lists nothing.
//
// prefix is a plain string prefix ("a" matches "a0" and "a/b"); its
// directory part, up to the last slash, must be a clean path or the call
// fails with storage.ErrInvalidPath. If fn returns an error, List stops and
// returns that error unwrapped.
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
	return storage.ListTree(ctx, tree{s, c}, prefix, fn)
}

// SweepTemp implements storage.Store. It finds the temporary files
// (storage.TempPrefix) that writes interrupted by a crash or a dropped
// connection left below the root, anywhere (opts.Dirs nil) or directly in
// the directories opts.Dirs, and unless opts.DryRun removes them, then the
// directories this leaves empty, up to but never including the root (never
// a directory that was empty before, nor one that was there before this
// store first wrote below it: see Delete). Symbolic links are never followed: a
// directory of opts.Dirs that is, or lies below, a symbolic link or
// something else than a directory is skipped, and so is a missing one. It
// returns the store paths of the temporary files found, sorted (on an
// error, those found so far). An entry of opts.Dirs that is not "" or a
// valid path fails with storage.ErrInvalidPath.
//
// It waits for this Store's in-flight writes but cannot see other
// processes' writes: call it (without DryRun) only while holding the
// destination lock, as part of crash recovery. An exclusive create (PutIfVersion
// with the zero Version) of another process whose temporary file it
// removes starts over with a new one.
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
	return storage.SweepTree(ctx, tree{s, c}, opts)
}

// tree is the store's directory tree on the connection c, as
// storage.ListTree and storage.SweepTree walk it.
type tree struct {
	s *Store
	c *conn
}

// OpenDir implements storage.Tree: the directory and its parents must be
// plain directories (checked with Lstat, never following a link).
func (t tree) OpenDir(_ context.Context, p string) (storage.TreeDir, error) {
	if p != "" {
		err := t.s.checkParents(t.c, p+"/x") // p itself and its parents
		var se *sftplib.StatusError
		// Some servers report "below a regular file" (ENOTDIR) as a
		// generic failure: that is a missing directory only when a parent
		// is indeed missing or no directory, else the failure is reported.
		if h := (*storage.HiddenError)(nil); errors.As(err, &h) || errors.Is(err, fs.ErrNotExist) ||
			errors.As(err, &se) && se.FxCode() == sftplib.ErrSSHFxFailure && t.s.parentMissing(t.c, p+"/x") {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return dir{t.c, t.s.full(p)}, nil
}

// PruneDir implements storage.Tree (see Store.removeDir and Store.prune).
func (t tree) PruneDir(_ context.Context, p string, parents bool) {
	if parents {
		t.s.prune(t.c, t.s.full(p), false)
		return
	}
	t.s.removeDir(t.c, t.s.full(p), false)
}

// dir is a directory of the tree: its server path on the connection c.
type dir struct {
	c    *conn
	path string
}

// Entries implements storage.TreeDir: READDIR returns each entry's own
// attributes (lstat's), so links are seen as links and never followed.
func (d dir) Entries(ctx context.Context) ([]fs.FileInfo, error) {
	fis, err := d.c.sftp.ReadDirContext(ctx, d.path)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(fis, func(fi fs.FileInfo) bool { return fi.Name() == "." || fi.Name() == ".." }), nil
}

// Sub implements storage.TreeDir.
func (d dir) Sub(_ context.Context, name string) (storage.TreeDir, error) {
	return dir{d.c, path.Join(d.path, name)}, nil
}

// Remove implements storage.TreeDir.
func (d dir) Remove(_ context.Context, name string) error {
	return d.c.sftp.Remove(path.Join(d.path, name))
}

// Close implements storage.TreeDir.
func (dir) Close() {}
