package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// Backend describes the local backend (see storage.Backend): a directory on
// this machine, with no configuration block.
func Backend() storage.Backend {
	return storage.Backend{
		Name:       "local",
		Title:      "local disk",
		Summary:    "local disk",
		Path:       storage.PathLocal,
		Jobs:       4,
		Properties: properties,
		Open:       openStore,
	}
}

// openStore opens the directory root; its Puts defer their directory fsyncs to
// Sync, which the executor calls before the catalog (see NewDeferred).
func openStore(_ context.Context, _ any, root string, _ func(string) string) (storage.Store, error) {
	return NewDeferred(root)
}

// properties: local disk stages (a rename or a hard link makes a staged
// file visible), rewrites in one pass and creates its root.
var properties = storage.Properties{Stage: true, Rewrite: true, CreatesRoot: true, Directories: true}

// Properties implements storage.Store.
func (s *Store) Properties() storage.Properties { return properties }

// IsTransient implements storage.Store: the network failures of
// storage.IsTransient (a root on a network file system can see them).
func (s *Store) IsTransient(err error) bool { return storage.IsTransient(err) }

// missingDirs returns dir and its missing parents, dir first.
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

// RemoveCreatedRoot implements storage.Store: if this store created its root
// and the root is empty, it removes it and each empty parent it created, and
// reports whether the root is gone (a later write creates it again). Writers
// call it after a failed change, so a failed first publish leaves no empty directory.
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

// copyExact is dirstore.CopyExact through a stageBuf buffer: a file that fits
// takes one read to fill it, one to see the end of input, and one write (where
// io.CopyN makes 32 KiB reads and writes). It stops once ctx is done (storage.Cancelled:
// no fence check per buffer; the commit checks the fence before the change it guards).
func (s *Store) copyExact(ctx context.Context, dst io.Writer, src io.Reader, size int64) error {
	// A source that verifies a copy made by other means (a bundle file) is
	// copied in the kernel and read back from dst (tempWriter.Read, P1), on
	// Linux (a temporary file made by createTempAt).
	c, ok := src.(copiedBy)
	if w, wok := dst.(*tempWriter); ok && wok && w.dirfd >= 0 {
		w.src, dst = c.CopiedBy(w), io.Discard
		defer func() { w.src = nil }() // a staged write outlives its source
	}
	bp, _ := s.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, stageBuf)
		bp = &b
	}
	defer s.bufs.Put(bp)
	buf := *bp
	var done int64
	for {
		if err := storage.Cancelled(ctx); err != nil {
			return err
		}
		// One byte more than is left, to see the end of the input (or
		// that there is more) in the same pass.
		n, err := fill(src, buf[:min(int64(len(buf)), size-done+1)])
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
		case err == io.EOF:
			if done < size {
				return fmt.Errorf("short input: got %d of %d bytes", done, size)
			}
			return storage.Cancelled(ctx)
		default:
			return fmt.Errorf("after %d of %d bytes: %w", done, size, err)
		}
	}
}

// copiedBy is a source that verifies, in its own place, the bytes of a copy of
// the file it returns, made by other means (bundle.OpenVerified's).
type copiedBy interface{ CopiedBy(copy io.Reader) *os.File }

// fill reads into buf until it is full or src fails, returning src's own error
// (unlike io.ReadFull), so a reader failing with io.ErrUnexpectedEOF is not
// taken for a short input.
func fill(src io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := src.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// stageBuf is the copy buffer of a staged write.
const stageBuf = 256 << 10

// hintError says what went wrong in the operator's terms (which directory,
// which user, what to do) instead of the failed system call, to which it
// unwraps, so errors.Is(err, fs.ErrPermission) and the like hold.
type hintError struct {
	msg  string
	err  error
	root bool // the message names the store (see rootError)
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// explain translates a permission error of op on the store path p ("" or "."
// for the root) into a message naming the directory, the user and the missing
// access; any other err is returned unchanged.
func (s *Store) explain(op, p string, err error) error {
	var he *hintError
	if !errors.Is(err, fs.ErrPermission) || errors.As(err, &he) {
		return err
	}
	if q, err := strconv.Unquote(p); err == nil {
		p = q // a List's prefix
	}
	dir := s.path
	if d := path.Dir(p); p != "" && d != "." {
		dir = filepath.Join(s.path, filepath.FromSlash(d))
	}
	access := "write and search (w and x) permission on the directory " + dir
	switch op {
	case "get", "read", "open", "stat", "list": // op only reads: it lacks read access
		access = "read and search (r and x) permission on the directory " + dir + " and what it holds"
	}
	return &hintError{err: err, msg: fmt.Sprintf(
		"permission denied: %s lacks %s; grant it (chown or chmod) or run distributor as a user that has it",
		currentUser(), access)}
}

// rootError translates the failure to open or create the root directory.
// Its message names the store, so callers return it as it is.
func (s *Store) rootError(verb string, err error) error {
	hint := func(format string, args ...any) error {
		return &hintError{root: true, err: err, msg: fmt.Sprintf("local %s: "+format, append([]any{s.path}, args...)...)}
	}
	fi, serr := os.Stat(s.path)
	switch {
	case serr == nil && !fi.IsDir():
		return hint("the configured root is a %s, not a directory: set the destination's path to a directory (a missing one is created), or move the file out of the way",
			dirstore.FileKind(fi))
	case errors.Is(err, syscall.ENOTDIR):
		return hint("a parent of the configured root is a file, not a directory: set the destination's path to a directory, or move that file out of the way")
	case errors.Is(err, fs.ErrPermission) && verb == "create":
		return hint("create root: permission denied: %s lacks write and search (w and x) permission on %s, where the root is to be created; create the root for that user, or grant it (chown or chmod), or run distributor as a user that has it",
			currentUser(), existingParent(s.path))
	case errors.Is(err, fs.ErrPermission):
		return hint("open root: permission denied: %s lacks read and search (r and x) permission on the root, or search (x) permission on a directory above it; grant it (chown or chmod) or run distributor as a user that has it",
			currentUser())
	}
	return fmt.Errorf("local %s: %s root: %w", s.path, verb, err)
}

func existingParent(p string) string {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			return d
		}
	}
}

// currentUser names the user this process runs as: "user NAME (uid N)".
func currentUser() string {
	uid := os.Geteuid()
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

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
	return syncAt(r, ".", (*os.File).Sync)
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
