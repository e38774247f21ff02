// The temporary file every write goes through: created beside its
// target, synced, then renamed or linked into place.

package local

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
)

// tempWriter is a temporary file being written next to its target.
type tempWriter struct {
	c       *chain
	f       *os.File // nil once closed
	tmp     string   // the temporary file's name in c.parent()
	dirfd   int      // c.parent()'s descriptor from the directory cache, or -1
	renamed bool     // tmp no longer exists under its name
	s       *Store
	// deferSync leaves the directory fsyncs of this write to Store.Sync;
	// skipFileSync also the file's own (a new name, see rename).
	deferSync    bool
	skipFileSync bool
}

// begin opens the target's directory chain through the store's directory
// cache, creating missing directories, and creates a temporary file in it
// (on the cached parent's descriptor where the platform allows:
// createTempAt). The directories walked are recorded (noteDirs). A
// concurrent Delete may prune a directory just made, or a cached one; begin
// then starts over with a fresh walk.
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
				return &tempWriter{c: c, f: f, tmp: tmp, dirfd: dirfd, s: s}, nil
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
	for range 10 {
		name := storage.TempPrefix + rand.Text()
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if err := f.Chmod(fileMode); err != nil { // undo the umask
			f.Close()
			dir.Remove(name)
			return nil, "", err
		}
		return f, name, nil
	}
	return nil, "", errors.New("cannot create a unique temporary file")
}

// closeFile fsyncs and closes the temporary file.
func (w *tempWriter) closeFile() error {
	var err error
	if w.skipFileSync {
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

// rename publishes the temporary file over the target and makes it durable.
// ctx is checked just before the rename, the commit.
func (w *tempWriter) rename(ctx context.Context) error {
	if err := w.finishFile(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := w.c.parent().Rename(w.tmp, w.c.base()); err != nil {
		return err
	}
	w.renamed = true
	return w.syncDirs()
}

// finishFile makes the temporary file's bytes durable (see rename for
// when a deferred store skips that) and closes it, unless it was closed
// already (a staged write).
func (w *tempWriter) finishFile() error {
	if w.f == nil {
		return nil
	}
	// A deferred store skips the file's own fsync when the name is new
	// (Sync then flushes the file system at once): a crash before Sync can
	// only leave a new, unrecorded name, which recovery removes. Replacing
	// an existing name always fsyncs first, so the name holds the old bytes
	// or the new ones, even after a power loss.
	if w.deferSync && canSyncfs {
		if _, err := w.c.parent().Lstat(w.c.base()); errors.Is(err, fs.ErrNotExist) {
			w.skipFileSync = true
		}
	}
	return w.closeFile()
}

// link publishes the temporary file under the target's name only if the
// name is free, and makes it durable like rename does for a new name.
func (w *tempWriter) link(ctx context.Context) error {
	if w.f != nil {
		w.skipFileSync = w.deferSync && canSyncfs // the name is new, or the link fails
		if err := w.closeFile(); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, base := w.c.parent(), w.c.base()
	err := w.placeNew()
	if cannotLink(err) {
		// No hard links here: look, then rename (safe under the lock).
		if _, lerr := dir.Lstat(base); lerr == nil {
			err = fs.ErrExist
		} else if err = dir.Rename(w.tmp, base); err == nil {
			w.renamed = true
			return w.syncDirs()
		}
	}
	return w.linked(err, "an entry exists")
}

// placeNew gives the complete temporary file the target's name only if no
// entry has that name: with one renameat2(RENAME_NOREPLACE) where the
// platform and the file system have it, else with a hard link, after which
// the temporary name is removed. A taken name (even by a dangling symbolic
// link) yields an error matching fs.ErrExist, a vanished temporary file one
// matching fs.ErrNotExist, a file system that cannot hard-link one that
// cannotLink recognises; nothing is published then.
func (w *tempWriter) placeNew() error {
	if w.dirfd >= 0 {
		err := renameNoReplace(w.dirfd, w.tmp, w.c.base())
		if err == nil {
			w.renamed = true
			return nil
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	dir := w.c.parent()
	err := dir.Link(w.tmp, w.c.base())
	if err == nil {
		dir.Remove(w.tmp)
		w.renamed = true
	}
	return err
}

// cannotLink reports whether err, from a hard link, means that the file
// system cannot hard-link here (rather than that the name is taken).
func cannotLink(err error) bool {
	return err != nil && !errors.Is(err, fs.ErrExist) &&
		(errors.Is(err, errors.ErrUnsupported) || errors.Is(err, fs.ErrPermission))
}

// linked ends the exclusive publication of the temporary file under the
// target's name, whose result (of the link, or of its fallback) is err: a
// taken name fails the condition (with the message taken), a success
// removes the temporary name and makes the new name durable.
func (w *tempWriter) linked(err error, taken string) error {
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s", storage.ErrPrecondition, taken)
	}
	if err != nil {
		return err
	}
	if !w.renamed { // createExclusive wrote the target itself
		w.c.parent().Remove(w.tmp)
		w.renamed = true
	}
	return w.syncDirs()
}

// syncDirs fsyncs the target's directory and every directory in which the
// chain created an entry.
func (w *tempWriter) syncDirs() error {
	n := len(w.c.roots) - 1
	if w.deferSync {
		w.s.dirtyMu.Lock()
		for i := range w.c.roots {
			if w.c.dirty[i] || i == n {
				w.s.dirty[strings.Join(w.c.segs[:i], "/")] = true
			}
		}
		w.s.dirtyMu.Unlock()
		return nil
	}
	for i, r := range w.c.roots {
		if w.c.dirty[i] || i == n {
			if err := syncDir(r); err != nil {
				return fmt.Errorf("sync directory: %w", err)
			}
		}
	}
	return nil
}

// cleanup closes and removes the temporary file unless it was renamed, then
// (after a failure) removes the directories this store created on the
// target's path if they are empty (see Store.pruneMade), and closes the
// directory chain.
func (w *tempWriter) cleanup() {
	if w.f != nil {
		w.f.Close()
	}
	if !w.renamed {
		w.c.parent().Remove(w.tmp)
		w.s.pruneMade(w.c)
	}
	w.c.close()
}
