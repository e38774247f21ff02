package local

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"

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
