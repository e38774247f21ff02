package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

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
	return storage.ListResult(s.list(ctx, prefix, fn), func(err error) error {
		return fmt.Errorf("local %s: list %q: %w", s.path, prefix, s.explain("list", prefix, err))
	})
}

func (s *Store) list(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	dir, filter, err := splitPrefix(prefix)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	root, err := s.openRoot(false)
	if err != nil || root == nil {
		return err
	}
	start, rel := root, ""
	if dir != "" {
		// Walk to dir itself: the chain of "dir/x" ends at dir.
		c, err := readChain(root, dir+"/x")
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer c.close()
		start, rel = c.parent(), dir+"/"
	}
	return walk(ctx, start, rel, filter, false, fn)
}

// entry is one directory entry to visit, keyed for byte-wise path order: a
// directory sorts as name+"/", the common prefix of everything below it.
type entry struct {
	key string
	fi  fs.FileInfo
}

// walk lists the directory d, whose path relative to the store root is rel
// ("" or ending in "/"), keeping only entries whose key starts with filter,
// and recurses into directories. With below (d is strictly below the
// listed prefix) an empty d is reported as an Info with Dir set.
func walk(ctx context.Context, d *os.Root, rel, filter string, below bool, fn func(storage.Info) error) error {
	names, err := readDirNames(d)
	if err != nil {
		return err
	}
	if below && len(names) == 0 {
		return storage.EmitEmptyDir(rel, fn)
	}
	entries := make([]entry, 0, len(names))
	for _, name := range names {
		if strings.HasPrefix(name, storage.TempPrefix) || !strings.HasPrefix(name+"/", filter) {
			continue
		}
		fi, err := d.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		switch {
		case fi.Mode().IsRegular() && strings.HasPrefix(name, filter):
			entries = append(entries, entry{key: name, fi: fi})
		case fi.IsDir():
			entries = append(entries, entry{key: name + "/", fi: fi})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.fi.IsDir() {
			info := storage.Info{Path: rel + e.key, Size: e.fi.Size(), ModTime: e.fi.ModTime()}
			if err := fn(info); err != nil {
				return &storage.CallbackError{Err: err}
			}
			continue
		}
		sub, err := d.OpenRoot(e.fi.Name())
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		err = walk(ctx, sub, rel+e.key, "", true, fn)
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// readDirNames returns the names in directory d.
func readDirNames(d *os.Root) ([]string, error) {
	f, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
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
	dirs, err := storage.CheckSweepDirs(opts.Dirs)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.writes.Lock()
	defer s.writes.Unlock()
	root, err := s.openRoot(false)
	if err != nil || root == nil {
		return nil, err
	}
	sw := &sweeper{s: s, ctx: ctx, dryRun: opts.DryRun}
	if opts.Dirs == nil {
		_, err = sw.tree(root, "")
	} else {
		for _, d := range dirs {
			if err = sw.dir(root, d); err != nil {
				break
			}
		}
	}
	if len(sw.found) > 0 && !opts.DryRun {
		s.dirs.forget() // it may have pruned directories
	}
	if opts.Found != nil {
		for i, p := range sw.found {
			opts.Found(storage.Info{Path: p, Size: sw.sizes[i]})
		}
	}
	slices.Sort(sw.found)
	return sw.found, err
}

// sweeper collects (and unless dryRun removes) temporary files.
type sweeper struct {
	s      *Store
	ctx    context.Context
	dryRun bool
	found  []string // store paths

	// sizes holds the size of each found file, by its index in found.
	sizes []int64
}

// add records the temporary file p of size bytes, found (and removed).
func (sw *sweeper) add(p string, size int64) {
	sw.found = append(sw.found, p)
	sw.sizes = append(sw.sizes, size)
}

// tree sweeps the directory d, whose path relative to the store root is
// rel ("" or ending in "/"), and everything below it. It returns how many
// temporary files it found there.
func (sw *sweeper) tree(d *os.Root, rel string) (int, error) {
	names, err := readDirNames(d)
	if err != nil {
		return 0, err
	}
	count := 0
	for _, name := range names {
		if err := sw.ctx.Err(); err != nil {
			return count, err
		}
		fi, err := d.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return count, err
		}
		switch {
		case fi.IsDir():
			sub, err := d.OpenRoot(name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return count, err
			}
			n, err := sw.tree(sub, rel+name+"/")
			sub.Close()
			count += n
			if err != nil {
				return count, err
			}
			if n > 0 && !sw.dryRun {
				sw.s.removeDir(d, name, rel+name) // unless not empty, or not the store's to remove
			}
		case strings.HasPrefix(name, storage.TempPrefix):
			if err := sw.remove(d, name); err != nil {
				return count, err
			}
			sw.add(rel+name, fi.Size())
			count++
		}
	}
	return count, nil
}

// dir sweeps the store directory p ("" is the root) itself, not what is
// below it, then prunes it and its parents if that left them empty. A
// missing p, or one that is not a plain directory, is skipped.
func (sw *sweeper) dir(root *os.Root, p string) error {
	d, rel := root, ""
	var c *chain
	if p != "" {
		// Walk to p itself: the chain of "p/x" ends at p.
		var err error
		c, err = readChain(root, p+"/x")
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer c.close()
		d, rel = c.parent(), p+"/"
	}
	names, err := readDirNames(d)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed meanwhile
	}
	if err != nil {
		return err
	}
	count := 0
	for _, name := range names {
		if !strings.HasPrefix(name, storage.TempPrefix) {
			continue
		}
		if err := sw.ctx.Err(); err != nil {
			return err
		}
		fi, err := d.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.IsDir() {
			continue
		}
		if err := sw.remove(d, name); err != nil {
			return err
		}
		sw.add(rel+name, fi.Size())
		count++
	}
	if count > 0 && !sw.dryRun && c != nil {
		sw.s.prune(c)
	}
	return nil
}

// remove removes the temporary file name in d, unless dryRun.
func (sw *sweeper) remove(d *os.Root, name string) error {
	if sw.dryRun {
		return nil
	}
	if err := sw.ctx.Err(); err != nil {
		return err
	}
	if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
