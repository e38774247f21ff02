package dirstore

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/distributor-dev/distributor/internal/parhash"
	"github.com/distributor-dev/distributor/internal/storage"
)

// HiddenError marks a path whose parent is not a plain directory (a link,
// a file...): readers treat it as missing (see Missing), Delete leaves it
// alone, writers refuse it.
type HiddenError struct {
	Dir     string // the offending parent, relative to the root
	Symlink bool
}

// CheckDir returns a *HiddenError unless fi, dir's Lstat, is a plain directory.
func CheckDir(dir string, fi fs.FileInfo) error {
	if fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	return &HiddenError{Dir: dir, Symlink: fi.Mode()&fs.ModeSymlink != 0}
}

func (e *HiddenError) Error() string {
	if e.Symlink {
		return fmt.Sprintf("%s is a symbolic link (never followed)", e.Dir)
	}
	return fmt.Sprintf("%s is not a directory", e.Dir)
}

// Unwrap makes a symbolic link in the way an invalid path (it could lead
// outside the root) and any other non-directory a plain ENOTDIR-like error.
func (e *HiddenError) Unwrap() error {
	if e.Symlink {
		return storage.ErrInvalidPath
	}
	return errNotDir
}

var errNotDir = errors.New("not a directory")

// Missing is the error of the reader op for a path below the parent: one
// that matches storage.ErrNotExist (not storage.ErrInvalidPath) and says why.
func (e *HiddenError) Missing(op string) error {
	return &fs.PathError{Op: op, Path: e.Dir, Err: fmt.Errorf("%w (%v)", storage.ErrNotExist, e)}
}

// NotObject is the error of the reader op for p, whose Lstat fi is not a
// regular file: it matches storage.ErrNotObject and storage.ErrNotExist.
func NotObject(op, p string, fi fs.FileInfo) error {
	return &fs.PathError{Op: op, Path: p, Err: fmt.Errorf("%w: %w (a %s is not an object)", storage.ErrNotObject, storage.ErrNotExist, FileKind(fi))}
}

// FileKind names what fi describes ("directory", "regular file", ...).
func FileKind(fi fs.FileInfo) string {
	switch {
	case fi.IsDir():
		return "directory"
	case fi.Mode().IsRegular():
		return "regular file"
	case fi.Mode()&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// Tree is a store's tree of directories, as ListTree and SweepTree walk it.
type Tree interface {
	// OpenDir returns the directory at the store path dir ("" is the
	// root), reached without following a symbolic link, or nil and no
	// error when it is missing, or is (or lies below) something that is
	// not a plain directory.
	OpenDir(ctx context.Context, dir string) (TreeDir, error)
	// PruneDir removes the directory dir (a store path, never "") if it
	// is empty and the store may remove it (Book.MayRemove); with
	// parents, then each of its parents the same way, deepest first,
	// stopping at the first it leaves (never the root). Best effort.
	PruneDir(ctx context.Context, dir string, parents bool)
}

// TreeDir is one open directory of a Tree.
type TreeDir interface {
	// Entries returns the directory's entries whose names start with
	// prefix, as Lstat gives them (links never followed), leaving out those
	// removed meanwhile; a directory that is gone: fs.ErrNotExist. (On
	// local disk each entry returned costs a stat: the sweep of the root
	// directory asks for temporary files only.)
	Entries(ctx context.Context, prefix string) ([]fs.FileInfo, error)
	// Sub opens the directory entry name without following a link
	// (gone: fs.ErrNotExist).
	Sub(ctx context.Context, name string) (TreeDir, error)
	// Remove removes the file name; a missing one is not an error.
	Remove(ctx context.Context, name string) error
	// Close releases the directory.
	Close()
}

// ListTree is storage.Store.List on a Tree (a directory sorts as its name
// plus a slash), skipping anything removed while it walks. An error of fn
// comes back in a storage.CallbackError (see storage.ListResult).
func ListTree(ctx context.Context, t Tree, prefix string, fn func(storage.Info) error) error {
	dir, filter, err := storage.SplitPrefix(prefix)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	d, err := t.OpenDir(ctx, dir)
	if err != nil || d == nil {
		return err
	}
	defer d.Close()
	rel := ""
	if dir != "" {
		rel = dir + "/"
	}
	return listDir(ctx, d, rel, filter, false, fn)
}

// treeEntry is one directory entry to visit, keyed for byte-wise path order.
type treeEntry struct {
	key string
	fi  fs.FileInfo
}

// listDir lists d (store path rel, "" or ending in "/"), keys starting with
// filter, recursing; with below (d strictly below the listed prefix) an
// empty d is reported as an Info with Dir set.
func listDir(ctx context.Context, d TreeDir, rel, filter string, below bool, fn func(storage.Info) error) error {
	fis, err := d.Entries(ctx, "")
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed while walking
	}
	if err != nil {
		return err
	}
	if below && len(fis) == 0 {
		if err := fn(storage.Info{Path: rel, Dir: true}); err != nil {
			return &storage.CallbackError{Err: err}
		}
		return nil
	}
	entries := make([]treeEntry, 0, len(fis))
	for _, fi := range fis {
		name := fi.Name()
		if strings.HasPrefix(name, storage.TempPrefix) || !strings.HasPrefix(name+"/", filter) {
			continue
		}
		if fi.Mode().IsRegular() {
			entries = append(entries, treeEntry{key: name, fi: fi})
		} else {
			entries = append(entries, treeEntry{key: name + "/", fi: fi})
		}
	}
	slices.SortFunc(entries, func(a, b treeEntry) int { return cmp.Compare(a.key, b.key) })
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.fi.IsDir() {
			info := storage.Info{Path: rel + e.key, Dir: true}
			if e.fi.Mode().IsRegular() {
				info = storage.Info{Path: rel + e.key, Size: e.fi.Size(), ModTime: e.fi.ModTime()}
			}
			if err := fn(info); err != nil {
				return &storage.CallbackError{Err: err}
			}
			continue
		}
		sub, err := d.Sub(ctx, e.fi.Name())
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		err = listDir(ctx, sub, rel+e.key, "", true, fn)
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// SweepTree is storage.Store.SweepTemp on a Tree, pruning the directories it
// empties (Tree.PruneDir). On an error it returns the paths found so far.
// The caller holds off its own writes meanwhile.
func SweepTree(ctx context.Context, t Tree, opts storage.SweepOptions) ([]string, error) {
	dirs, err := storage.CheckSweepDirs(opts.Dirs)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sw := &treeSweep{t: t, opts: opts}
	if opts.Dirs == nil {
		var root TreeDir
		if root, err = t.OpenDir(ctx, ""); err == nil && root != nil {
			_, err = sw.tree(ctx, root, "", true)
			root.Close()
		}
	} else {
		for _, d := range dirs {
			if err = sw.dir(ctx, d); err != nil {
				break
			}
		}
	}
	slices.Sort(sw.found)
	return sw.found, err
}

// List is storage.Store.List with ListTree on the FS's Tree, never
// following a symbolic link.
func (d *Writer) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	t, done, err := d.FS.Walk(ctx, false)
	if err == nil {
		defer done()
		err = ListTree(ctx, t, prefix, fn)
	}
	return storage.ListResult(err, func(err error) error { return d.FS.Wrap("list", strconv.Quote(prefix), err) })
}

// SweepTemp is storage.Store.SweepTemp with SweepTree on the FS's Tree,
// never following a symbolic link. It waits for this Writer's writes in
// flight, but cannot see other processes' writes: call it (without DryRun)
// only while holding the destination lock, as part of crash recovery.
func (d *Writer) SweepTemp(ctx context.Context, opts storage.SweepOptions) (_ []string, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%s: sweep temporary files: %w", d.FS, err)
		}
	}()
	if _, err := storage.CheckSweepDirs(opts.Dirs); err != nil {
		return nil, err
	}
	t, done, err := d.FS.Walk(ctx, !opts.DryRun)
	if err != nil {
		return nil, err
	}
	defer done()
	defer d.Exclusive()()
	return SweepTree(ctx, t, opts)
}

type treeSweep struct {
	t     Tree
	opts  storage.SweepOptions
	found []string // store paths
}

// take removes (unless DryRun) and records the temporary file rel+name.
func (sw *treeSweep) take(ctx context.Context, d TreeDir, rel, name string, size int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !sw.opts.DryRun {
		if err := d.Remove(ctx, name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	sw.found = append(sw.found, rel+name)
	if sw.opts.Found != nil {
		sw.opts.Found(storage.Info{Path: rel + name, Size: size})
	}
	return nil
}

// tree sweeps d, whose store path is rel ("" or ending in "/"), and with
// deep everything below it; it returns how many temporary files it found.
func (sw *treeSweep) tree(ctx context.Context, d TreeDir, rel string, deep bool) (int, error) {
	prefix := storage.TempPrefix
	if deep {
		prefix = ""
	}
	fis, err := d.Entries(ctx, prefix)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // removed meanwhile
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
		switch {
		case fi.IsDir():
			if !deep {
				continue
			}
			sub, err := d.Sub(ctx, name)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return count, err
			}
			n, err := sw.tree(ctx, sub, rel+name+"/", true)
			sub.Close()
			count += n
			if err != nil {
				return count, err
			}
			if n > 0 && !sw.opts.DryRun {
				sw.t.PruneDir(ctx, rel+name, false) // if this sweep emptied it
			}
		case strings.HasPrefix(name, storage.TempPrefix):
			if err := sw.take(ctx, d, rel, name, fi.Size()); err != nil {
				return count, err
			}
			count++
		}
	}
	return count, nil
}

// dir sweeps p itself, not below it, then prunes it and emptied parents.
func (sw *treeSweep) dir(ctx context.Context, p string) error {
	d, err := sw.t.OpenDir(ctx, p)
	if err != nil || d == nil {
		return err
	}
	defer d.Close()
	rel := ""
	if p != "" {
		rel = p + "/"
	}
	count, err := sw.tree(ctx, d, rel, false)
	if err == nil && count > 0 && !sw.opts.DryRun && p != "" {
		sw.t.PruneDir(ctx, p, true)
	}
	return err
}

// Book notes the directories a directory store's writes created (made) and
// walked through already there (found), so that its cleanups remove only
// directories it created (spec section 6: cleanup removes only what the run
// provably wrote). A directory found but not made is never removed, even
// empty (see MayRemove).
//
// Two parallel writes may create one directory: the one whose mkdir fails
// finds it, and made wins whatever the order of the notes. Notes are never
// dropped, even when a directory is removed: under the destination lock a
// directory that comes back is the store's own write again, and a monotonic
// book needs no lock across the removal (rmdir of a non-empty directory
// fails, which settles races between a cleanup and a write).
//
// Keys are the store's own names for directories. The zero Book is ready;
// it is safe for concurrent use.
type Book struct {
	mu          sync.Mutex
	made, found map[string]bool
}

// Note records that a write walked through the directory dir, creating
// it when made.
func (b *Book) Note(dir string, made bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.made == nil {
		b.made, b.found = map[string]bool{}, map[string]bool{}
	}
	if made {
		b.made[dir] = true
	} else {
		b.found[dir] = true
	}
}

// Made reports whether a write of the store created dir: the cleanup of
// a failed or aborted write removes only such directories (when empty).
func (b *Book) Made(dir string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.made[dir]
}

// MayRemove reports whether a Delete or a sweep may remove dir once it is
// empty: the store created it, or none of its writes reached it (a
// directory emptied of files an earlier run wrote).
func (b *Book) MayRemove(dir string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.made[dir] || !b.found[dir]
}

// DigestSource is the content of a streamed conditional write on a store
// whose Versions are content digests: exactly Size bytes of a reader,
// copied from its start every time (a retried attempt rewinds it) and
// hashed as they pass, so the new Version needs no second read.
type DigestSource struct {
	r    io.ReadSeeker
	size int64
	v    storage.Version // of the last complete copy
}

// Size is the number of bytes a copy writes.
func (src *DigestSource) Size() int64 { return src.size }

// CopyTo rewinds the reader and copies exactly Size bytes of it to w,
// hashing them on the reading side (w keeps its own ReaderFrom, if any).
func (src *DigestSource) CopyTo(ctx context.Context, w io.Writer) error {
	if src.size < 0 {
		return fmt.Errorf("negative size %d", src.size)
	}
	if _, err := src.r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewind the input: %w", err)
	}
	// Hashed on another core while the bytes go out (a catalog's upload).
	h := parhash.New(sha256.New())
	defer h.Close()
	if err := CopyExact(ctx, w, io.TeeReader(src.r, h), src.size); err != nil {
		return err
	}
	src.v = SumVersion(h.Sum())
	return nil
}

// Version is the Version of the content the last complete copy wrote.
func (src *DigestSource) Version() storage.Version { return src.v }

// SumVersion is the content Version of a sha256 digest: "sha256:<hex>".
func SumVersion(sum []byte) storage.Version {
	return storage.Version("sha256:" + hex.EncodeToString(sum))
}

// ContentVersion is data's content Version (see SumVersion).
func ContentVersion(data []byte) storage.Version {
	sum := sha256.Sum256(data)
	return SumVersion(sum[:])
}

// ReadDigested is ReadVersioned on a content-versioned store: fn reads r
// (failing once ctx is done) while another core hashes it (a large catalog
// is decoded and hashed at once); what fn leaves is drained. An error of fn
// is returned as is; a read error after fn is wrapped by wrap.
func ReadDigested(ctx context.Context, r io.Reader, fn func(io.Reader) error, wrap func(error) error) (storage.Version, error) {
	h := parhash.New(sha256.New())
	defer h.Close()
	cr := bufio.NewReaderSize(storage.ContextReader(ctx, io.TeeReader(r, h)), storage.HashBuffer)
	if err := fn(cr); err != nil {
		return "", err
	}
	// Discard drains through cr's buffer (io.Copy would hand io.Discard the
	// reader below it, read 8 KiB at a time).
	for {
		if _, err := cr.Discard(storage.HashBuffer); err == io.EOF {
			break
		} else if err != nil {
			return "", wrap(err)
		}
	}
	return SumVersion(h.Sum()), nil
}

// CopyChunk is how many bytes CopyExact copies between context checks.
const CopyChunk = 1 << 20

// CopyExact copies exactly size bytes from src to dst, checking ctx every
// CopyChunk bytes; a src that fails, ends early or has more fails it (so the
// Put publishes nothing).
func CopyExact(ctx context.Context, dst io.Writer, src io.Reader, size int64) error {
	var done int64
	for done < size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.CopyN(dst, src, min(CopyChunk, size-done))
		done += n
		if err == io.EOF {
			return fmt.Errorf("short input: got %d of %d bytes", done, size)
		}
		if err != nil {
			return fmt.Errorf("after %d of %d bytes: %w", done, size, err)
		}
	}
	var extra [1]byte
	n, err := io.ReadFull(src, extra[:])
	switch {
	case n > 0:
		return fmt.Errorf("input is longer than %d bytes", size)
	case err != io.EOF:
		return fmt.Errorf("after %d of %d bytes: %w", size, size, err)
	}
	return ctx.Err()
}
