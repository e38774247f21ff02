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
	return s.walk(ctx, c, rel, filter, false, fn)
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
// links and never followed. With below (rel is strictly below the listed
// prefix) an empty rel is reported as an Info with Dir set.
func (s *Store) walk(ctx context.Context, c *conn, rel, filter string, below bool, fn func(storage.Info) error) error {
	fis, err := c.sftp.ReadDirContext(ctx, s.full(strings.TrimSuffix(rel, "/")))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a missing root, or removed while walking
	}
	if err != nil {
		return err
	}
	entries := make([]entry, 0, len(fis))
	empty := true
	for _, fi := range fis {
		name := fi.Name()
		empty = empty && (name == "." || name == "..")
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
	if below && empty {
		return storage.EmitEmptyDir(rel, fn)
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
		if err := s.walk(ctx, c, rel+e.key, "", true, fn); err != nil {
			return err
		}
	}
	return nil
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
	dirs, err := storage.CheckSweepDirs(opts.Dirs)
	if err != nil {
		return nil, err
	}
	c, err := s.client(ctx)
	if err != nil {
		return nil, err
	}
	defer watch(ctx, c)()
	s.writes.Lock()
	defer s.writes.Unlock()
	sw := &sweeper{s: s, c: c, ctx: ctx, dryRun: opts.DryRun, report: opts.Found}
	if opts.Dirs == nil {
		_, err = sw.tree(s.root, "")
	} else {
		for _, d := range dirs {
			if err = sw.dir(d); err != nil {
				break
			}
		}
	}
	slices.Sort(sw.found)
	return sw.found, err
}

// sweeper collects (and unless dryRun removes) temporary files.
type sweeper struct {
	s      *Store
	c      *conn
	ctx    context.Context
	dryRun bool
	found  []string           // store paths
	report func(storage.Info) // SweepOptions.Found, or nil
}

// add records the temporary file p of size bytes, found (and removed).
func (sw *sweeper) add(p string, size int64) {
	sw.found = append(sw.found, p)
	if sw.report != nil {
		sw.report(storage.Info{Path: p, Size: size})
	}
}

// tree sweeps the server directory dir, whose store path is rel ("" or
// ending in "/"), and everything below it. It returns how many temporary
// files it found there.
func (sw *sweeper) tree(dir, rel string) (int, error) {
	fis, err := sw.c.sftp.ReadDirContext(sw.ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	count := 0
	for _, fi := range fis {
		if err := sw.ctx.Err(); err != nil {
			return count, err
		}
		name := fi.Name()
		if name == "." || name == ".." {
			continue
		}
		full := path.Join(dir, name)
		switch {
		case fi.IsDir(): // READDIR attributes are lstat's: a link is no directory
			n, err := sw.tree(full, rel+name+"/")
			count += n
			if err != nil {
				return count, err
			}
			if n > 0 && !sw.dryRun {
				sw.s.removeDir(sw.c, full, false) // if this sweep emptied it
			}
		case strings.HasPrefix(name, storage.TempPrefix):
			if err := sw.remove(full); err != nil {
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
func (sw *sweeper) dir(p string) error {
	rel := ""
	if p != "" {
		// p itself and its parents: the parents of "p/x".
		err := sw.s.checkParents(sw.c, p+"/x")
		if h := (*storage.HiddenError)(nil); errors.As(err, &h) || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel = p + "/"
	}
	full := sw.s.full(p)
	fis, err := sw.c.sftp.ReadDirContext(sw.ctx, full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a missing root, or removed meanwhile
	}
	if err != nil {
		return err
	}
	count := 0
	for _, fi := range fis {
		name := fi.Name()
		if !strings.HasPrefix(name, storage.TempPrefix) || fi.IsDir() {
			continue
		}
		if err := sw.ctx.Err(); err != nil {
			return err
		}
		if err := sw.remove(path.Join(full, name)); err != nil {
			return err
		}
		sw.add(rel+name, fi.Size())
		count++
	}
	if count > 0 && !sw.dryRun {
		sw.s.prune(sw.c, full, false)
	}
	return nil
}

// remove removes the temporary file at the server path full, unless dryRun.
func (sw *sweeper) remove(full string) error {
	if sw.dryRun {
		return nil
	}
	if err := sw.ctx.Err(); err != nil {
		return err
	}
	if err := sw.c.sftp.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
