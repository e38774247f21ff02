package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Properties implements storage.Store: local disk stages (a rename or a
// hard link makes a staged file visible).
func (s *Store) Properties() storage.Properties {
	return storage.Properties{Stage: true, Rewrite: true, CreatesRoot: true, Directories: true}
}

// ListPage implements storage.Store: local disk lists no pages (List
// reads a directory tree without a request per page).
func (s *Store) ListPage(_ context.Context, prefix string, _ int) ([]storage.Info, bool, error) {
	return nil, false, storage.Unsupported(s, "list-page", prefix)
}

// IsTransient implements storage.Store: the network failures of
// storage.IsTransient (a root on a network file system can see them).
func (s *Store) IsTransient(err error) bool { return storage.IsTransient(err) }

// Stage implements storage.Store: the first half of Put (PutReplace or
// PutCreate): exactly size bytes of r are written to a temporary file next to
// the target and fsynced (a deferred store leaves a new name's fsync to
// Sync, as Put does), creating missing parent directories. Commit renames
// (or hard-links) it into place and makes the name durable as Put does;
// Abort removes it and the directories Stage created that are empty. No
// file descriptor stays open between Stage and Commit.
func (s *Store) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	if opts.Mode == storage.PutIfVersion {
		return nil, storage.Unsupported(s, "stage", p)
	}
	create := opts.Mode == storage.PutCreate
	g, err := s.stage(ctx, p, r, size, create)
	if err != nil {
		return nil, s.errorf("stage", p, err)
	}
	return g, nil
}

func (s *Store) stage(ctx context.Context, p string, r io.Reader, size int64, create bool) (*staged, error) {
	if err := checkPath(p); err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, fmt.Errorf("negative size %d", size)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.writes.RLock()
	defer s.writes.RUnlock()
	w, err := s.beginStaged(p)
	if err != nil {
		return nil, err
	}
	w.deferSync = s.deferDirSync
	err = s.copyExact(ctx, w.f, r, size)
	switch {
	case err != nil:
	case create:
		// As PutCreate: the name is new, or the commit fails.
		w.skipFileSync = w.deferSync && canSyncfs
		err = w.closeFile()
	default:
		err = w.finishFile()
	}
	if err != nil {
		if w.f != nil {
			w.f.Close()
		}
		w.c.parent().Remove(w.tmp)
		s.pruneMade(w.c)
		w.c.close()
		return nil, err
	}
	g := &staged{s: s, p: p, tmp: w.tmp, create: create, made: slices.Clone(w.c.dirty)}
	w.c.close()
	return g, nil
}

// staged is a staged write on local disk.
type staged struct {
	s      *Store
	p      string
	tmp    string // the temporary file's name in the target's directory
	create bool
	made   []bool // made[i]: Stage created the directory segs[i] in directory segs[:i]

	mu   sync.Mutex
	done bool // committed or aborted
}

// errStagedDone is the error of a second Commit or Abort.
var errStagedDone = errors.New("staged write already committed or aborted")

// reopen opens the target's directory chain again (without creating
// anything) and returns the writer of the staged temporary file.
func (g *staged) reopen() (*tempWriter, error) {
	root, err := g.s.openRoot(false)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, fmt.Errorf("%w (the root directory is gone)", storage.ErrTempVanished)
	}
	c, _, err := g.s.stagedChain(root, g.p, false)
	if err != nil {
		return nil, err
	}
	copy(c.dirty, g.made)
	return &tempWriter{c: c, tmp: g.tmp, s: g.s, deferSync: g.s.deferDirSync}, nil
}

// Commit implements storage.Staged: the rename (or, for a create, the
// hard link, which fails with storage.ErrPrecondition if the name was
// taken meanwhile) of Put or PutCreate. Whatever its outcome, the temporary
// file is gone afterwards.
func (g *staged) Commit(ctx context.Context) error {
	if err := g.commit(ctx); err != nil {
		return g.s.errorf("commit", g.p, err)
	}
	return nil
}

func (g *staged) commit(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return errStagedDone
	}
	g.done = true
	s := g.s
	s.writes.RLock()
	defer s.writes.RUnlock()
	w, err := g.reopen()
	if err != nil {
		return err
	}
	defer func() {
		if !w.renamed { // a failed commit leaves nothing either
			w.c.parent().Remove(w.tmp)
			s.pruneMade(w.c)
		}
		w.c.close()
	}()
	if g.create {
		err = w.link(ctx)
	} else {
		err = w.rename(ctx)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// The link or rename found no temporary file (it is not looked
		// up before: that would cost every commit a system call).
		if _, lerr := w.c.parent().Lstat(w.tmp); errors.Is(lerr, fs.ErrNotExist) {
			return fmt.Errorf("%w (%v)", storage.ErrTempVanished, lerr)
		}
	}
	return err
}

// Abort implements storage.Staged: it removes the temporary file and the
// directories Stage created that are now empty. Aborting a committed
// write does nothing.
func (g *staged) Abort(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return nil
	}
	g.done = true
	s := g.s
	s.writes.RLock()
	defer s.writes.RUnlock()
	w, err := g.reopen()
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, storage.ErrTempVanished) {
		return nil // swept, with its directories
	}
	if err != nil {
		return s.errorf("abort", g.p, err)
	}
	defer w.c.close()
	if err := w.c.parent().Remove(w.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.errorf("abort", g.p, err)
	}
	s.pruneMade(w.c) // the directories this store made, if empty
	return nil
}

// missingDirs returns dir and those of its parents that do not exist,
// dir first.
func missingDirs(dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// RemoveCreatedRoot implements storage.Store: if this store created
// its root directory (the first write found it missing) and the root is
// empty now, it removes it, then each parent directory it created that is
// empty, and reports whether the root is gone. A later write creates it
// again. Writers call it after a failed change left the root as they found
// it, so that a failed first publish leaves no empty directory behind.
func (s *Store) RemoveCreatedRoot(context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.madeRoot) == 0 {
		return false, nil
	}
	if err := os.Remove(s.madeRoot[0]); err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.madeRoot = nil
			return false, nil
		case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
			return false, nil
		}
		return false, fmt.Errorf("local %s: remove the root directory it created: %w", s.path, err)
	}
	s.dirs.forget()
	if s.root != nil {
		s.root.Close()
		s.root = nil
	}
	for _, d := range s.madeRoot[1:] {
		if os.Remove(d) != nil {
			break
		}
	}
	s.madeRoot = nil
	return true, nil
}

// maxCachedDirs bounds the directory cache of staged writes (two
// descriptors per directory); a write into a directory beyond it walks
// its path as Put does.
const maxCachedDirs = 256

// dirCache keeps the directories that staged writes and their commits
// work in open for the store's life: a publish of thousands of files into
// a few directories then walks each path (an Lstat and an openat per
// segment) once, not twice per file. Every directory in it was reached as
// openChain reaches one (no symbolic link, a plain directory). Whenever
// the store removes a directory it forgets them all (handles in use stay
// valid until Close); a write whose directory went away meanwhile fails
// with fs.ErrNotExist and starts over with a fresh walk (see beginStaged).
type dirCache struct {
	mu      sync.Mutex
	m       map[string]*dirHandle // store path of the directory ("" = root)
	retired []*dirHandle          // forgotten, closed by close
}

// dirHandle is one cached directory.
type dirHandle struct {
	root *os.Root    // nil for the store root (the Store owns it)
	fi   fs.FileInfo // its Lstat when it was opened (nil for the root)
	// dir is the same directory as a file, whose descriptor creates the
	// temporary files (see createTempAt); nil where that is not used.
	dir *os.File
	fd  int
}

func (h *dirHandle) close() {
	if h.root != nil {
		h.root.Close()
	}
	if h.dir != nil {
		h.dir.Close()
	}
}

// at reports whether h is still the directory named seg in parent.
func (h *dirHandle) at(parent *os.Root, seg string) bool {
	fi, err := parent.Lstat(seg)
	return err == nil && fi.IsDir() && os.SameFile(fi, h.fi)
}

func (d *dirCache) get(key string) *dirHandle {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.m[key]
}

// add caches h under key and returns the handle to use: h, or the one a
// concurrent writer cached first. It returns nil (and caches nothing)
// when the cache is full: the caller keeps and closes h.
func (d *dirCache) add(key string, h *dirHandle) *dirHandle {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cur := d.m[key]; cur != nil {
		d.retired = append(d.retired, h)
		return cur
	}
	if len(d.m) >= maxCachedDirs {
		return nil
	}
	if d.m == nil {
		d.m = map[string]*dirHandle{}
	}
	d.m[key] = h
	return h
}

// forget drops every cached directory: the store removed one.
func (d *dirCache) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, h := range d.m {
		d.retired = append(d.retired, h)
	}
	clear(d.m)
}

// close closes every handle the cache ever held.
func (d *dirCache) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, h := range d.m {
		h.close()
	}
	for _, h := range d.retired {
		h.close()
	}
	clear(d.m)
	d.retired = nil
}

// stagedChain is openChain through the store's directory cache, for
// staged writes and their commits. It also returns the cached handle of
// p's parent directory, or nil when it is not cached. Each cached
// directory is first checked to still be the entry at its path (one
// Lstat per segment, where a walk costs four system calls): a directory
// moved or replaced since it was cached (by someone else: the store
// forgets what it removes itself) makes the cache forgotten and the path
// walked afresh, so neither a temporary file nor a commit lands in a
// directory that is no longer where its path says (possibly moved out of
// the root).
func (s *Store) stagedChain(root *os.Root, p string, create bool) (*chain, *dirHandle, error) {
	segs := strings.Split(p, "/")
	n := len(segs) - 1
	c := &chain{segs: segs, roots: []*os.Root{root}, dirty: make([]bool, len(segs)), shared: make([]bool, len(segs))}
	var parent *dirHandle
	for i := range n {
		key := strings.Join(segs[:i+1], "/")
		if h := s.dirs.get(key); h != nil {
			if h.at(c.roots[i], segs[i]) {
				c.roots = append(c.roots, h.root)
				c.shared[i+1] = true
				parent = h
				continue
			}
			s.dirs.forget()
		}
		next, fi, made, err := openLevel(c.roots[i], segs, i, create)
		if err != nil {
			c.close()
			return nil, nil, err
		}
		c.dirty[i] = made
		c.roots = append(c.roots, next)
		parent = nil
		h := &dirHandle{root: next, fi: fi, fd: -1}
		if i == n-1 && canCreateAt {
			// The parent: also opened as a file, whose descriptor
			// creates the temporary files.
			f, err := next.Open(".")
			if err != nil {
				c.close()
				return nil, nil, err
			}
			h.dir, h.fd = f, int(f.Fd())
		}
		switch got := s.dirs.add(key, h); {
		case got == nil: // the cache is full: the chain keeps next
			if h.dir != nil {
				h.dir.Close()
			}
		default: // got is h, or one a concurrent writer cached first
			c.roots[i+1], c.shared[i+1] = got.root, true
			parent = got
		}
	}
	if n > 0 {
		return c, parent, nil
	}
	// A file at the top level: its parent is the store root.
	if h := s.dirs.get(""); h != nil || !canCreateAt {
		return c, h, nil
	}
	f, err := root.Open(".")
	if err != nil {
		c.close()
		return nil, nil, err
	}
	h := &dirHandle{dir: f, fd: int(f.Fd())}
	got := s.dirs.add("", h)
	if got == nil {
		f.Close()
	}
	return c, got, nil
}

// beginStaged is begin for a staged write: the directory chain comes from
// the store's cache, and the temporary file is created on the cached
// parent's descriptor where the platform allows (createTempAt). The
// directories walked are recorded as begin records them.
func (s *Store) beginStaged(p string) (*tempWriter, error) {
	root, err := s.openRoot(true)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		c, h, err := s.stagedChain(root, p, true)
		if err == nil {
			var f *os.File
			var tmp string
			if h != nil && h.dir != nil {
				f, tmp, err = s.createTempAt(h.fd)
			} else {
				f, tmp, err = createTemp(c.parent())
			}
			if err == nil {
				s.noteDirs(c)
				return &tempWriter{c: c, f: f, tmp: tmp, s: s}, nil
			}
			c.close()
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			return nil, err
		}
		s.dirs.forget() // a cached directory was removed: walk again
	}
}

// copyExact is storage.CopyExact through a buffer of up to stageBuf
// bytes: a file that fits takes one read to fill the buffer, one to see
// the end of input, and one write (where io.CopyN makes 32 KiB reads and
// writes).
func (s *Store) copyExact(ctx context.Context, dst io.Writer, src io.Reader, size int64) error {
	bp, _ := s.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, stageBuf)
		bp = &b
	}
	defer s.bufs.Put(bp)
	buf := *bp
	var done int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// One byte more than is left, to see the end of the input (or
		// that there is more) in the same pass.
		n, err := io.ReadFull(src, buf[:min(int64(len(buf)), size-done+1)])
		if done+int64(n) > size {
			return fmt.Errorf("input is longer than %d bytes", size)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return fmt.Errorf("after %d of %d bytes: %w", done, size, werr)
			}
			done += int64(n)
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			if done < size {
				return fmt.Errorf("short input: got %d of %d bytes", done, size)
			}
			return ctx.Err()
		default:
			return fmt.Errorf("after %d of %d bytes: %w", done, size, err)
		}
	}
}

// stageBuf is the copy buffer of a staged write.
const stageBuf = 256 << 10
