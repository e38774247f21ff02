package local

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// chain is the directories leading to a path's final segment, each an *os.Root
// opened below the previous one, so every operation on the final segment uses
// a directory handle reached without following any symbolic link.
type chain struct {
	segs  []string   // all segments of the path; the last is the base name
	roots []*os.Root // roots[0] is the store root; roots[i] is the directory segs[:i]
	dirty []bool     // dirty[i]: an entry was created in roots[i] and needs a sync
	// shared[i]: roots[i] belongs to the store's directory cache (see
	// walkChain), not to the chain; nil when the chain owns all.
	shared []bool
}

func (c *chain) parent() *os.Root { return c.roots[len(c.roots)-1] }

func (c *chain) base() string { return c.segs[len(c.segs)-1] }

// close closes every directory the chain opened (not the store root).
func (c *chain) close() {
	for i, r := range c.roots {
		if i > 0 && (c.shared == nil || !c.shared[i]) {
			r.Close()
		}
	}
	c.roots = c.roots[:1]
}

// walkChain walks the parent directories of p below root without following
// symbolic links: each segment is checked with Lstat, then opened as a nested
// os.Root (which, even after a concurrent swap, cannot leave the store root).
// With create, missing directories are made with mode 0755. A missing parent
// (!create) matches fs.ErrNotExist; one that is no directory is a
// *dirstore.HiddenError. Readers and Delete walk without a cache (readChain).
//
// Writers walk through the directory cache d: a cached directory is first
// checked to still be the entry at its path (one Lstat, where a walk costs four
// system calls), and each walked one is added; the cached handle of p's parent
// (or nil) is returned too. A cached directory moved or replaced since (by
// someone else: the store forgets what it removes) makes the cache forgotten
// and the path walked afresh, so no temporary file or commit lands in a
// directory no longer where its path says (possibly moved out of the root).
func walkChain(root *os.Root, p string, create bool, d *dirCache) (*chain, *dirHandle, error) {
	segs := strings.Split(p, "/")
	n := len(segs) - 1
	c := &chain{segs: segs, roots: []*os.Root{root}, dirty: make([]bool, len(segs))}
	if d != nil {
		c.shared = make([]bool, len(segs))
	}
	var parent *dirHandle
	for i := range n {
		key := strings.Join(segs[:i+1], "/")
		if h := d.get(key); h != nil {
			if h.at(c.roots[i], segs[i]) {
				c.roots = append(c.roots, h.root)
				c.shared[i+1] = true
				parent = h
				continue
			}
			d.forget()
		}
		next, fi, made, err := openLevel(c.roots[i], segs, i, create)
		if err != nil {
			c.close()
			return nil, nil, err
		}
		c.dirty[i] = made
		c.roots = append(c.roots, next)
		parent = nil
		if d == nil {
			continue
		}
		h, err := newDirHandle(next, fi, i == n-1)
		if err != nil {
			c.close()
			return nil, nil, err
		}
		if got := d.add(key, h); got != nil { // h, or one a concurrent writer cached first
			c.roots[i+1], c.shared[i+1] = got.root, true
			parent = got
		} else if h.dir != nil { // the cache is full: the chain keeps next
			h.dir.Close()
		}
	}
	if n > 0 || d == nil {
		return c, parent, nil
	}
	h, err := d.rootHandle(root)
	if err != nil {
		c.close()
		return nil, nil, err
	}
	return c, h, nil
}

// openLevel opens the directory segs[i] below cur (segs[:i]) as walkChain
// does: Lstat-checked (a plain directory), made (0755) if missing and create is
// set, then opened as a nested os.Root. fi is its Lstat.
func openLevel(cur *os.Root, segs []string, i int, create bool) (next *os.Root, fi fs.FileInfo, made bool, err error) {
	seg := segs[i]
	fi, err = cur.Lstat(seg)
	if create && errors.Is(err, fs.ErrNotExist) {
		err = cur.Mkdir(seg, dirMode)
		switch {
		case err == nil:
			made = true
			// Mkdir honours the umask; published trees get 0755.
			err = cur.Chmod(seg, dirMode)
		case errors.Is(err, fs.ErrExist):
			err = nil // made concurrently: check it below
		}
		if err == nil {
			fi, err = cur.Lstat(seg)
		}
	}
	if err != nil {
		return nil, nil, made, err
	}
	if err := dirstore.CheckDir(strings.Join(segs[:i+1], "/"), fi); err != nil {
		return nil, nil, made, err
	}
	next, err = cur.OpenRoot(seg)
	return next, fi, made, err
}

// readChain is walkChain for readers, without the cache: a missing parent or
// one that is not a plain directory yields an error matching fs.ErrNotExist.
func readChain(root *os.Root, p string) (*chain, error) {
	c, _, err := walkChain(root, p, false, nil)
	if h := (*dirstore.HiddenError)(nil); errors.As(err, &h) {
		return nil, h.Missing("open")
	}
	return c, err
}

// syncDir flushes a directory's entries to stable storage. Windows cannot
// sync a directory handle (and needs not: its renames are journalled).
func syncDir(r *os.Root) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := r.Open(".")
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// noteDirs records c's parent directories, just walked with create: made if c.dirty, else found.
func (s *Store) noteDirs(c *chain) {
	for i := range len(c.segs) - 1 {
		s.book.Note(strings.Join(c.segs[:i+1], "/"), c.dirty[i])
	}
}

// prune removes the chain's now-empty directories (left by a Delete or a
// sweep), deepest first, stopping at the first that is not empty, cannot be
// removed or may not be (dirstore.Book.MayRemove), never the root. A concurrent
// Put that loses its fresh directory here retries (see begin). With madeOnly (a
// failed or aborted write) only those this store created go: writes share
// directories, and whichever is undone last removes them.
func (s *Store) prune(c *chain, madeOnly bool) {
	for i := len(c.roots) - 1; i >= 1; i-- {
		dir := strings.Join(c.segs[:i], "/")
		if madeOnly && !s.book.Made(dir) || !s.removeDir(c.roots[i-1], c.segs[i-1], dir) {
			return
		}
	}
}

// removeDir removes dir (a store path; name in parent) if empty and ours to remove; true if it did.
func (s *Store) removeDir(parent *os.Root, name, dir string) bool {
	if !s.book.MayRemove(dir) {
		return false
	}
	if fi, err := parent.Lstat(name); err != nil || !fi.IsDir() {
		return false
	}
	if parent.Remove(name) != nil {
		return false
	}
	s.dirs.forget()
	syncDir(parent)
	return true
}

// maxCachedDirs bounds the directory cache of staged writes (two
// descriptors per directory); a write into a directory beyond it walks
// its path as Put does.
const maxCachedDirs = 256

// dirCache keeps the directories staged writes and their commits work in open
// for the store's life, so a publish of thousands of files into a few directories
// walks each path (an Lstat and an openat per segment) once, not twice per file.
// Each was reached as walkChain reaches one. Whenever the store removes a
// directory it forgets them all (handles in use stay valid until Close); a write
// whose directory went away fails with fs.ErrNotExist and walks afresh (Store.begin).
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

// descriptor returns h's directory file descriptor, or -1 (h nil or without one).
func (h *dirHandle) descriptor() int {
	if h == nil || h.dir == nil {
		return -1
	}
	return h.fd
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

// get returns the handle cached under key, or nil (always on a nil cache).
func (d *dirCache) get(key string) *dirHandle {
	if d == nil {
		return nil
	}
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
	d.retired = slices.AppendSeq(d.retired, maps.Values(d.m))
	clear(d.m)
}

func (d *dirCache) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, h := range slices.AppendSeq(d.retired, maps.Values(d.m)) {
		h.close()
	}
	clear(d.m)
	d.retired = nil
}

// newDirHandle is the cache entry of the directory root (Lstat fi); a target's
// parent is also opened as a file whose descriptor creates temporary files.
func newDirHandle(root *os.Root, fi fs.FileInfo, parent bool) (*dirHandle, error) {
	h := &dirHandle{root: root, fi: fi, fd: -1}
	if parent && canCreateAt {
		f, err := root.Open(".")
		if err != nil {
			return nil, err
		}
		h.dir, h.fd = f, int(f.Fd())
	}
	return h, nil
}

// rootHandle returns the store root's cache entry, added on first use; nil where
// temporary files are not created on a descriptor (or the cache is full).
func (d *dirCache) rootHandle(root *os.Root) (*dirHandle, error) {
	if h := d.get(""); h != nil || !canCreateAt {
		return h, nil
	}
	f, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	got := d.add("", &dirHandle{dir: f, fd: int(f.Fd())})
	if got == nil {
		f.Close()
	}
	return got, nil
}
