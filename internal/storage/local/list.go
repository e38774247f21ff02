package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/distributor-dev/distributor/internal/storage"
)

// List implements storage.Store. It walks the tree below the root without
// following symbolic links and calls fn, in the caller's goroutine, for every
// regular file whose path starts with prefix, in byte-wise order of the full
// path (so "a-b" < "a.b" < "a/b" < "a0"). Symbolic links, directories,
// special files and temporary files (storage.TempPrefix) are skipped.
// Regular files whose names the store cannot address (say, containing a
// backslash) are still reported; the other methods reject such paths with
// storage.ErrInvalidPath. Entries removed during the walk are skipped.
//
// prefix is a plain string prefix ("a" matches "a0" and "a/b"; "a/" only
// what is below directory a); its directory part, up to the last slash, must
// be a clean path or the call fails with storage.ErrInvalidPath. If fn
// returns an error, List stops and returns that error unwrapped.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return storage.ListResult(storage.ListTree(ctx, tree{s}, prefix, fn), func(err error) error {
		return fmt.Errorf("local %s: list %q: %w", s.path, prefix, s.explain("list", prefix, err))
	})
}

// SweepTemp implements storage.Store. It finds the temporary files
// (storage.TempPrefix) that writes interrupted by a crash left below the
// root, anywhere (opts.Dirs nil) or directly in the directories opts.Dirs,
// and unless opts.DryRun removes them, then the directories this leaves
// empty, up to but never including the root (never a directory that was
// empty before, nor one that was there before this store first wrote
// below it: see Delete). Symbolic links are never followed: a directory of
// opts.Dirs that is, or lies below, a symbolic link or something else than
// a directory is skipped, and so is a missing one. It returns the store
// paths of the temporary files found, sorted (on an error, those found so
// far). An entry of opts.Dirs that is not "" or a valid path fails with
// storage.ErrInvalidPath.
//
// It waits for this Store's in-flight writes, but cannot see other
// processes' writes: call it (without DryRun) only while holding the
// destination lock, as part of crash recovery. An exclusive create (PutIfVersion
// with the zero Version) of another process whose temporary file it
// removes starts over with a new one.
func (s *Store) SweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	found, err := s.sweepTemp(ctx, opts)
	if err != nil {
		return found, fmt.Errorf("local %s: sweep temporary files: %w", s.path, err)
	}
	return found, nil
}

func (s *Store) sweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	defer s.dw.Exclusive()()
	found, err := storage.SweepTree(ctx, tree{s}, opts)
	if len(found) > 0 && !opts.DryRun {
		s.dirs.forget() // it may have pruned directories
	}
	return found, err
}

// tree is the store's directory tree as storage.ListTree and
// storage.SweepTree walk it.
type tree struct{ s *Store }

// OpenDir implements storage.Tree: the directory is reached as a
// reader's chain reaches it (no symbolic link, plain directories).
func (t tree) OpenDir(_ context.Context, p string) (storage.TreeDir, error) {
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

// PruneDir implements storage.Tree (see Store.removeDir and Store.prune).
func (t tree) PruneDir(_ context.Context, p string, parents bool) {
	root, err := t.s.openRoot(false)
	if err != nil || root == nil {
		return
	}
	c, err := readChain(root, p+"/x")
	if err != nil {
		return
	}
	defer c.close()
	if parents {
		t.s.prune(c)
		return
	}
	n := len(c.roots) - 1
	t.s.removeDir(c.roots[n-1], c.segs[n-1], p)
}

// dir is an open directory of the tree: r, reached by the chain c (nil
// for the store root, which the Store owns).
type dir struct {
	r *os.Root
	c *chain
	// owned: r was opened by Sub and is closed with the dir.
	owned bool
}

// Entries implements storage.TreeDir.
func (d *dir) Entries(context.Context) ([]fs.FileInfo, error) {
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

// Sub implements storage.TreeDir.
func (d *dir) Sub(_ context.Context, name string) (storage.TreeDir, error) {
	r, err := d.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &dir{r: r, owned: true}, nil
}

// Remove implements storage.TreeDir.
func (d *dir) Remove(_ context.Context, name string) error { return d.r.Remove(name) }

// Close implements storage.TreeDir.
func (d *dir) Close() {
	switch {
	case d.c != nil:
		d.c.close()
	case d.owned:
		d.r.Close()
	}
}
