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
		return s.errorf("list", fmt.Sprintf("%q", prefix), err)
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
	return walk(ctx, start, rel, filter, fn)
}

// entry is one directory entry to visit, keyed for byte-wise path order: a
// directory sorts as name+"/", the common prefix of everything below it.
type entry struct {
	key string
	fi  fs.FileInfo
}

// walk lists the directory d, whose path relative to the store root is rel
// ("" or ending in "/"), keeping only entries whose key starts with filter,
// and recurses into directories.
func walk(ctx context.Context, d *os.Root, rel, filter string, fn func(storage.Info) error) error {
	names, err := readDirNames(d)
	if err != nil {
		return err
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
		err = walk(ctx, sub, rel+e.key, "", fn)
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

// SweepTemp removes the temporary files (storage.TempPrefix) that writes
// interrupted by a crash left anywhere below the root, then the directories
// that this leaves empty (never the root, never a directory that was empty
// before). Symbolic links are not followed. It returns how many temporary
// files it removed. It waits for this Store's in-flight writes, but cannot
// see other processes' writes: call it only while holding the destination
// lock, as part of crash recovery.
func (s *Store) SweepTemp(ctx context.Context) (int, error) {
	s.writes.Lock()
	defer s.writes.Unlock()
	root, err := s.openRoot(false)
	if err != nil || root == nil {
		return 0, err
	}
	n, err := sweep(ctx, root)
	if err != nil {
		return n, fmt.Errorf("local %s: sweep temporary files: %w", s.path, err)
	}
	return n, nil
}

// sweep removes the temporary files below d and returns how many.
func sweep(ctx context.Context, d *os.Root) (int, error) {
	names, err := readDirNames(d)
	if err != nil {
		return 0, err
	}
	count := 0
	for _, name := range names {
		if err := ctx.Err(); err != nil {
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
			if err != nil {
				return count, err
			}
			n, err := sweep(ctx, sub)
			sub.Close()
			count += n
			if err != nil {
				return count, err
			}
			if n > 0 {
				d.Remove(name) // fails, harmlessly, unless now empty
			}
		case strings.HasPrefix(name, storage.TempPrefix):
			if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return count, err
			}
			count++
		}
	}
	return count, nil
}
