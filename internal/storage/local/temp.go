// The temporary file (dirstore.Temp) beside its target: synced, then renamed or linked into place.

package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// dirFS is the store as dirstore.Writer writes to it.
type dirFS struct{ *Store }

func (d dirFS) Wrap(op, p string, err error) error { return d.errorf(op, p, err) }

// String names the store in the kit's messages, as errorf does.
func (d dirFS) String() string { return "local " + d.path }

// CanLink implements dirstore.FS: whether a file system can link is
// known only once it refuses (Link).
func (dirFS) CanLink(context.Context) bool { return true }

// Temp implements dirstore.FS (see begin).
func (d dirFS) Temp(_ context.Context, p string, deferred bool) (dirstore.Temp, error) {
	w, err := d.begin(p)
	if err != nil {
		return nil, err
	}
	w.deferSync = deferred && d.deferDirSync
	return w, nil
}

// tempWriter is a temporary file being written next to its target.
type tempWriter struct {
	s       *Store
	p       string
	c       *chain   // nil while detached
	made    []bool   // c.dirty, kept while detached
	f       *os.File // nil once closed
	tmp     string   // the temporary file's name in c.parent()
	dirfd   int      // c.parent()'s descriptor from the directory cache, or -1
	renamed bool     // tmp no longer exists under its name
	// deferSync leaves the directory fsyncs of this write to Store.Sync;
	// skipFileSync also the file's own (a new name, see Close).
	deferSync    bool
	skipFileSync bool
	// written is how many bytes were written; flushed how many of them
	// the kernel was asked to start writing to disk (startWriteback).
	written, flushed int64
	src              *os.File // what Read copies in the kernel (copyExact)
}

// writebackChunk is how many bytes a temporary file's writer lets the
// page cache hold before it asks the kernel to start writing them to
// disk (startWriteback): the disk then works while the rest is read,
// hashed and written, instead of all of it waiting for the Sync or fsync
// at the end (bench/run big, P6: a 2 GiB file's syncfs took 1 s after
// the copy).
const writebackChunk = 8 << 20

// begin walks the target's directory chain through the directory cache,
// creating (and noting) missing directories, and creates a temporary file there
// (on the cached parent's descriptor where possible: createTempAt). A concurrent
// Delete may prune a directory just made or cached: begin then walks afresh.
func (s *Store) begin(p string) (*tempWriter, error) {
	root, err := s.openRoot(true)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		c, h, err := walkChain(root, p, true, &s.dirs)
		if err == nil {
			var f *os.File
			var tmp string
			dirfd := h.descriptor()
			if dirfd >= 0 {
				f, tmp, err = s.createTempAt(dirfd)
			} else {
				f, tmp, err = createTemp(c.parent())
			}
			if err == nil {
				s.noteDirs(c) // what a cleanup may remove
				return &tempWriter{s: s, p: p, c: c, f: f, tmp: tmp, dirfd: dirfd}, nil
			}
			c.close()
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			return nil, err
		}
		s.dirs.forget() // a cached directory was removed: walk again
	}
}

// createTemp creates a new temporary file with mode 0644 in dir.
func createTemp(dir *os.Root) (*os.File, string, error) {
	return dirstore.NewTemp(func(name string) (*os.File, error) {
		f, err := dir.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileMode)
		if err != nil {
			return nil, err
		}
		if err := f.Chmod(fileMode); err != nil { // undo the umask
			f.Close()
			dir.Remove(name)
			return nil, err
		}
		return f, nil
	})
}

// Write implements dirstore.Temp. Every writebackChunk bytes it starts
// their write-out (startWriteback), without waiting for it.
func (w *tempWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	return n, w.wrote(int64(n), err)
}

func (w *tempWriter) wrote(n int64, err error) error {
	w.written += n
	if w.written-w.flushed >= writebackChunk {
		startWriteback(w.f, w.flushed, w.written-w.flushed)
		w.flushed = w.written
	}
	return err
}

// Read copies the next len(b) bytes of w.src into the file in the kernel
// (os.File.ReadFrom: copy_file_range, as cp does; where the file systems
// refuse, a copy through user space) and reads them back into b: a source
// copied so (copyExact, P1) verifies the bytes written. A short copy is
// the end of w.src.
func (w *tempWriter) Read(b []byte) (int, error) {
	off := w.written
	n, err := w.f.ReadFrom(io.LimitReader(w.src, int64(len(b))))
	if err = w.wrote(n, err); err != nil {
		return 0, err
	}
	m, err := w.f.ReadAt(b[:n], off)
	if err == nil && m < len(b) {
		err = io.EOF
	}
	return m, err
}

// Close implements dirstore.Temp. A deferred store skips the file's own
// fsync when the name is new (Sync then flushes the file system at once):
// a crash before Sync can only leave a new, unrecorded name, which
// recovery removes. Replacing an existing name always fsyncs first, so the
// name holds the old bytes or the new ones, even after a power loss.
func (w *tempWriter) Close(newName bool) error {
	if w.deferSync && canSyncfs {
		if newName { // the name is new, or the link fails
			w.skipFileSync = true
		} else if _, err := w.c.parent().Lstat(w.c.base()); errors.Is(err, fs.ErrNotExist) {
			w.skipFileSync = true
		}
	}
	var err error
	if w.skipFileSync {
		if w.flushed > 0 && w.written > w.flushed {
			// A large file's tail, as its chunks went (Write).
			startWriteback(w.f, w.flushed, 0)
		}
		w.s.dirtyMu.Lock()
		w.s.unsyncedFiles = true
		w.s.dirtyMu.Unlock()
	} else {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

func (w *tempWriter) Rename(context.Context) error {
	if err := w.c.parent().Rename(w.tmp, w.c.base()); err != nil {
		return w.vanished(err)
	}
	w.renamed = true
	return w.s.syncDirs(w.c, w.deferSync)
}

// vanished is err, of a rename or link that found no temporary file (it
// is not looked up before: that would cost every commit a system call),
// as dirstore.ErrTempVanished.
func (w *tempWriter) vanished(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := w.c.parent().Lstat(w.tmp); errors.Is(lerr, fs.ErrNotExist) {
			return fmt.Errorf("%w (%v)", dirstore.ErrTempVanished, lerr)
		}
	}
	return err
}

// Link implements dirstore.Temp: one renameat2(RENAME_NOREPLACE) where possible,
// else a hard link and the temporary name's removal. A taken name (even by a
// dangling symbolic link) fails both.
func (w *tempWriter) Link(context.Context) error {
	err := errors.ErrUnsupported
	if w.dirfd >= 0 {
		err = renameNoReplace(w.dirfd, w.tmp, w.c.base())
	}
	if errors.Is(err, errors.ErrUnsupported) {
		dir := w.c.parent()
		if err = dir.Link(w.tmp, w.c.base()); err == nil {
			dir.Remove(w.tmp)
		}
	}
	switch {
	case err == nil:
		w.renamed = true
		return w.s.syncDirs(w.c, w.deferSync)
	case errors.Is(err, fs.ErrExist):
		return err
	case errors.Is(err, errors.ErrUnsupported), errors.Is(err, fs.ErrPermission):
		// The file system cannot hard-link here.
		return fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
	}
	return w.vanished(err)
}

func (w *tempWriter) Exists(context.Context) (bool, error) {
	_, err := w.c.parent().Lstat(w.c.base())
	return err == nil, nil
}

// syncDirs fsyncs the parent of c's path and every directory in which c
// created an entry, or with deferred records them for Sync.
func (s *Store) syncDirs(c *chain, deferred bool) error {
	n := len(c.roots) - 1
	if deferred {
		s.dirtyMu.Lock()
		for i := range c.roots {
			if c.dirty[i] || i == n {
				s.dirty[strings.Join(c.segs[:i], "/")] = true
			}
		}
		s.dirtyMu.Unlock()
		return nil
	}
	for i, r := range c.roots {
		if c.dirty[i] || i == n {
			if err := syncDir(r); err != nil {
				return fmt.Errorf("sync directory: %w", err)
			}
		}
	}
	return nil
}

// Detach implements dirstore.Temp: no descriptor stays open until Commit.
func (w *tempWriter) Detach() {
	w.made = slices.Clone(w.c.dirty)
	w.c.close()
	w.c = nil
}

// Attach implements dirstore.Temp: it reopens the target's chain (via the cache, creating nothing).
func (w *tempWriter) Attach(context.Context) error {
	root, err := w.s.openRoot(false)
	if err != nil {
		return err
	}
	if root == nil {
		return fmt.Errorf("%w (the root directory is gone)", dirstore.ErrTempVanished)
	}
	c, h, err := walkChain(root, w.p, false, &w.s.dirs)
	if err != nil {
		return err
	}
	copy(c.dirty, w.made)
	w.c, w.dirfd = c, h.descriptor()
	return nil
}

// Done implements dirstore.Temp (see Store.prune).
func (w *tempWriter) Done(context.Context) error {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	var err error
	if !w.renamed {
		if err = w.c.parent().Remove(w.tmp); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		w.s.prune(w.c, true)
	}
	w.c.close()
	return err
}

// RewriteIf implements storage.Store: it hashes the current file while fn
// writes the new one to a temporary file beside it, renamed over the target only
// if the current bytes had ifVersion, under the same lock and with the same
// durability as PutIfVersion's compare-and-swap.
func (s *Store) RewriteIf(ctx context.Context, p string, ifVersion storage.Version, fn func(cur io.Reader, w io.Writer) error) error {
	// fn's own error comes back as it is, as a List callback's does.
	return storage.ListResult(s.rewriteIf(ctx, p, ifVersion, fn), func(err error) error {
		return s.errorf("rewrite-if", p, err)
	})
}

func (s *Store) rewriteIf(ctx context.Context, p string, ifVersion storage.Version, fn func(cur io.Reader, w io.Writer) error) error {
	if err := storage.CheckPath(p); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer s.HoldCAS()()
	cur, err := s.FS.OpenFile(ctx, p, true)
	if errors.Is(err, fs.ErrNotExist) {
		return dirstore.CheckVersion("", ifVersion)
	}
	if err != nil {
		return err
	}
	defer cur.Close()
	w, err := s.begin(p)
	if err != nil {
		return err
	}
	defer w.Done(ctx)
	// The digest of the current bytes is computed on another core while
	// fn works.
	v, err := dirstore.ReadDigested(ctx, cur, func(r io.Reader) error {
		if err := fn(r, w.f); err != nil {
			return &storage.CallbackError{Err: err}
		}
		return nil
	}, func(err error) error { return err })
	if err != nil {
		return err
	}
	if err := dirstore.CheckVersion(v, ifVersion); err != nil {
		return err
	}
	if err := w.Close(false); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return w.Rename(ctx)
}

// CreateNew implements dirstore.FS: the exclusive create without hard links,
// O_EXCL on the target, then the content in place.
func (d dirFS) CreateNew(ctx context.Context, p string, src *dirstore.DigestSource) error {
	root, err := d.openRoot(true)
	if err != nil {
		return err
	}
	c, _, err := walkChain(root, p, true, &d.dirs)
	if err != nil {
		return err
	}
	defer c.close()
	d.noteDirs(c)
	if err = createExclusive(ctx, c.parent(), c.base(), src); err != nil {
		d.prune(c, true)
		return err
	}
	return d.syncDirs(c, false)
}

func createExclusive(ctx context.Context, dir *os.Root, base string, src *dirstore.DigestSource) error {
	f, err := dir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	err = f.Chmod(fileMode)
	if err == nil {
		err = src.CopyTo(ctx, f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		dir.Remove(base)
	}
	return err
}
