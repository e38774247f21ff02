package sftp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

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
	dir, filter, err := splitPrefix(prefix)
	if err != nil {
		return err
	}
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	rel := ""
	if dir != "" {
		// Every directory of the prefix must be a plain directory.
		segs := strings.Split(dir, "/")
		for i := range segs {
			fi, err := c.sftp.Lstat(s.full(strings.Join(segs[:i+1], "/")))
			if err != nil || !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
				var se *sftplib.StatusError
				if err == nil || errors.Is(err, fs.ErrNotExist) ||
					errors.As(err, &se) && se.FxCode() == sftplib.ErrSSHFxFailure {
					return nil
				}
				return err
			}
		}
		rel = dir + "/"
	}
	return s.walk(ctx, c, rel, filter, fn)
}

// entry is one directory entry to visit, keyed for byte-wise path order: a
// directory sorts as name+"/", the common prefix of everything below it.
type entry struct {
	key string
	fi  fs.FileInfo
}

// walk lists the store directory rel ("" or ending in "/"), keeping only
// entries whose key starts with filter, and recurses into directories.
// READDIR returns each entry's own attributes (lstat), so links are seen as
// links and never followed.
func (s *Store) walk(ctx context.Context, c *conn, rel, filter string, fn func(storage.Info) error) error {
	fis, err := c.sftp.ReadDirContext(ctx, s.full(strings.TrimSuffix(rel, "/")))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a missing root, or removed while walking
	}
	if err != nil {
		return err
	}
	entries := make([]entry, 0, len(fis))
	for _, fi := range fis {
		name := fi.Name()
		if name == "." || name == ".." || strings.HasPrefix(name, storage.TempPrefix) || !strings.HasPrefix(name+"/", filter) {
			continue
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
		if err := s.walk(ctx, c, rel+e.key, "", fn); err != nil {
			return err
		}
	}
	return nil
}

// SweepTemp removes the temporary files (storage.TempPrefix) that writes
// interrupted by a crash or a dropped connection left anywhere below the
// root, then the directories this leaves empty (never the root, never a
// directory that was empty before). Symbolic links are not followed. It
// returns how many temporary files it removed. It waits for this Store's
// in-flight writes but cannot see other processes' writes: call it only
// while holding the destination lock, as part of crash recovery.
func (s *Store) SweepTemp(ctx context.Context) (int, error) {
	c, err := s.client(ctx)
	if err != nil {
		return 0, fmt.Errorf("%s: sweep temporary files: %w", s, err)
	}
	defer watch(ctx, c)()
	s.writes.Lock()
	defer s.writes.Unlock()
	n, err := s.sweep(ctx, c, s.root)
	if err != nil {
		return n, fmt.Errorf("%s: sweep temporary files: %w", s, err)
	}
	return n, nil
}

// sweep removes the temporary files below the server directory dir and
// returns how many.
func (s *Store) sweep(ctx context.Context, c *conn, dir string) (int, error) {
	fis, err := c.sftp.ReadDirContext(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	count := 0
	for _, fi := range fis {
		if err := ctx.Err(); err != nil {
			return count, err
		}
		name := fi.Name()
		if name == "." || name == ".." {
			continue
		}
		full := path.Join(dir, name)
		switch {
		case fi.IsDir(): // READDIR attributes are lstat's: a link is no directory
			n, err := s.sweep(ctx, c, full)
			count += n
			if err != nil {
				return count, err
			}
			if n > 0 && c.sftp.RemoveDirectory(full) == nil {
				s.forgetDirs(full) // it was emptied by this sweep
			}
		case strings.HasPrefix(name, storage.TempPrefix):
			if err := c.sftp.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return count, err
			}
			count++
		}
	}
	return count, nil
}
