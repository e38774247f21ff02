// The directories writes work in, kept open for the store's life.

package local

import (
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"
)

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
