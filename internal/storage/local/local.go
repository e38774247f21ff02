// Package local implements storage.Store on a local directory tree.
//
// Paths must be clean relative slash-separated paths (no "", "/x", "x/",
// "." or ".." segment, "a//b", backslash or control character) none of whose
// segments starts with storage.TempPrefix; anything else fails with an error
// matching storage.ErrInvalidPath.
//
// Every access goes through an os.Root opened on the destination root, so no
// read, write or delete can land outside it. On top of that guarantee the
// store never follows a symbolic link at all:
//
//   - A path whose parent directory (any segment but the last) is a symbolic
//     link, or is not a directory, does not exist for readers (Open, Get,
//     ReadVersioned, Stat, Delete, List) and is refused by writers (Put,
//     PutIfVersion) with an error matching storage.ErrInvalidPath
//     (symbolic link) or a "not a directory" error.
//   - A final segment that is a symbolic link is not an object: Open, Get,
//     ReadVersioned and Stat report storage.ErrNotExist (and
//     storage.ErrNotObject) and List skips it. Put replaces the link itself
//     with a regular file (its target is never touched), PutIfVersion with the
//     zero Version fails with storage.ErrPrecondition (the name is taken), and
//     Delete removes the link, not its target.
//
// Only regular files are objects; directories, symbolic links, devices and
// other special files are never listed or opened.
//
// Writes go to a temporary file storage.TempPrefix+random in the target's
// directory, are fsynced, then renamed over the target (an exclusive create:
// RENAME_NOREPLACE, else a hard link, else a look and the rename, safe under
// the destination lock), and the directory is fsynced, so a published file
// survives a power loss. A write checks ctx between reads (a Read blocked
// in its source is not interrupted); PutIfVersion compares first, and
// without hard links creates O_EXCL in place. Files get mode 0644 and directories
// 0755, whatever the umask. Temporary files left by a crash are hidden from
// List and removed by SweepTemp.
//
// Versions are "sha256:" and the lowercase hex SHA-256 of the content, computed
// while the bytes stream, so a large object is never held in memory.
package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

const (
	fileMode fs.FileMode = 0o644
	dirMode  fs.FileMode = 0o755
)

// Store is a storage.Store on a local directory. It is safe for concurrent
// use by multiple goroutines.
type Store struct {
	path string

	mu     sync.Mutex // guards root and closed
	root   *os.Root   // nil until the root directory exists
	closed bool
	// book holds the directories this store's writes created or found in
	// place, which decide what a cleanup may remove (see Store.prune).
	book dirstore.Book
	// madeRoot lists the directories this store created for its root,
	// the root first (see RemoveCreatedRoot).
	madeRoot []string

	dirstore.Writer // Put, Stage, the reads, List and SweepTemp on dirFS

	// deferDirSync: Put leaves directory fsyncs to Sync (see NewDeferred).
	deferDirSync bool
	dirtyMu      sync.Mutex
	dirty        map[string]bool // directories (relative, "" = root) awaiting Sync
	// unsyncedFiles: a deferred Put created a file without fsyncing it;
	// Sync flushes the whole file system (syncfs).
	unsyncedFiles bool

	// dirs caches the directories staged writes work in (see dirCache).
	dirs dirCache
	bufs sync.Pool // *[]byte of stageBuf bytes, for copyExact
	// umaskKeeps: the umask clears no bit of fileMode (read once, on
	// Linux: see umaskKeepsFileMode).
	umaskOnce  sync.Once
	umaskKeeps bool
}

var _ storage.Store = (*Store)(nil)

// New returns a Store rooted at the absolute directory root. A missing root
// reads as empty and nothing is created on disk (a dry run leaves no trace)
// until the first Put or PutIfVersion creates it like os.MkdirAll. A root that
// is not a directory is an error. Symbolic links within root itself are
// resolved once, here or at the first write.
func New(root string) (*Store, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("local %s: root must be an absolute path", root)
	}
	s := &Store{path: filepath.Clean(root)}
	s.Writer = dirstore.Writer{FS: dirFS{s}, Copy: s.copyExact, CompareFirst: true}
	if _, err := s.openRoot(false); err != nil {
		return nil, err
	}
	return s, nil
}

// NewDeferred is New for a writer that publishes many files, then calls Sync
// once: Put records the directories whose entries changed, and Sync fsyncs each
// once. Until Sync returns, a Put's new name may not survive a power loss (its
// bytes do). PutIfVersion is never deferred: the catalog, lock and journal are
// durable when it returns.
func NewDeferred(root string) (*Store, error) {
	s, err := New(root)
	if err != nil {
		return nil, err
	}
	s.deferDirSync = true
	s.dirty = map[string]bool{}
	return s, nil
}

// Sync implements storage.Store: it fsyncs every directory a deferred Put
// changed, or the whole file system if a deferred Put skipped a file's own
// fsync (see NewDeferred). It does nothing on a store made by New.
func (s *Store) Sync(ctx context.Context) error {
	s.dirtyMu.Lock()
	dirs := slices.Collect(maps.Keys(s.dirty))
	clear(s.dirty)
	files := s.unsyncedFiles
	s.unsyncedFiles = false
	s.dirtyMu.Unlock()
	if len(dirs) == 0 && !files {
		return nil
	}
	root, err := s.openRoot(false)
	if err != nil || root == nil {
		return err
	}
	if files {
		// One syncfs flushes every file and directory of the file system
		// holding the root: what `sync -f` does after a cp.
		if err := syncAt(root, ".", syncfs); err != nil {
			return s.errorf("sync", ".", err)
		}
		return nil
	}
	// Deepest first, so a new directory's entries are durable before the
	// entry that names it in its parent.
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range dirs {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := syncAt(root, cmp.Or(d, "."), (*os.File).Sync)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since (a Delete pruned it)
		}
		if err != nil {
			return s.errorf("sync", d, err)
		}
	}
	return nil
}

func syncAt(root *os.Root, name string, sync func(*os.File) error) error {
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return sync(f)
}

// openRoot returns the root, opened on first use; a missing one gives (nil, nil), or is made with create.
func (s *Store) openRoot(create bool) (*os.Root, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("local %s: %w", s.path, os.ErrClosed)
	}
	if s.root != nil {
		return s.root, nil
	}
	r, err := os.OpenRoot(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, nil
		}
		made := missingDirs(s.path)
		if err := os.MkdirAll(s.path, dirMode); err != nil {
			return nil, s.rootError("create", err)
		}
		// Make the new root's directory entry durable (best effort: the
		// parent may not be ours to open).
		if p, err := os.Open(filepath.Dir(s.path)); err == nil {
			p.Sync()
			p.Close()
		}
		r, err = os.OpenRoot(s.path)
		s.madeRoot = made
	}
	if err != nil {
		return nil, s.rootError("open", err)
	}
	s.root = r
	return r, nil
}

// String returns the root directory's path.
func (s *Store) String() string { return s.path }

// Close releases the root directory handle; later calls fail with os.ErrClosed.
// Close must not race with other calls; closing twice is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.dirs.close()
	if s.root == nil {
		return nil
	}
	err := s.root.Close()
	s.root = nil
	return err
}

func (s *Store) errorf(op, p string, err error) error {
	if he := (*hintError)(nil); errors.As(err, &he) && he.root {
		return err // the root could not be opened: that names the store
	}
	return fmt.Errorf("local %s: %s %s: %w", s.path, op, p, s.explain(op, p, err))
}

// OpenFile implements dirstore.FS: an *os.File (which tells Get its size).
func (d dirFS) OpenFile(ctx context.Context, p string, _ bool) (io.ReadCloser, error) {
	c, fi, err := d.lstat(ctx, p)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if !fi.Mode().IsRegular() {
		return nil, dirstore.NotObject("open", p, fi)
	}
	f, err := c.parent().OpenFile(c.base(), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	// Lstat and OpenFile are two steps: check what was actually opened.
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = dirstore.NotObject("open", p, fi)
		}
		return nil, err
	}
	return f, nil
}

// lstat validates p; the caller closes the returned chain.
func (s *Store) lstat(ctx context.Context, p string) (*chain, fs.FileInfo, error) {
	if err := storage.CheckPath(p); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	root, err := s.openRoot(false)
	if err != nil {
		return nil, nil, err
	}
	if root == nil {
		return nil, nil, &fs.PathError{Op: "open", Path: ".", Err: fs.ErrNotExist}
	}
	c, err := readChain(root, p)
	if err != nil {
		return nil, nil, err
	}
	fi, err := c.parent().Lstat(c.base())
	if err != nil {
		c.close()
		return nil, nil, err
	}
	return c, fi, nil
}

// Stat implements storage.Store: it describes a regular file.
func (s *Store) Stat(ctx context.Context, p string) (storage.Info, error) {
	c, fi, err := s.lstat(ctx, p)
	if err != nil {
		return storage.Info{}, s.errorf("stat", p, err)
	}
	c.close()
	if !fi.Mode().IsRegular() {
		return storage.Info{}, s.errorf("stat", p, dirstore.NotObject("open", p, fi))
	}
	return storage.Info{Path: p, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete implements storage.Store. It removes the regular file or symbolic link
// (never its target) at p, fsyncs its directory and prunes the emptied ones; a
// missing path, a directory or a path below a symbolic link is left alone.
func (s *Store) Delete(ctx context.Context, p string) (err error) {
	defer dirstore.Wrap(s.FS, "delete", p, &err)
	c, fi, err := s.lstat(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer c.close()
	if fi.IsDir() {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.parent().Remove(c.base()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := syncDir(c.parent()); err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	s.prune(c, false)
	return nil
}

// Walk implements dirstore.FS. List reports regular files whose names the
// other methods reject with storage.ErrInvalidPath (say, containing a
// backslash).
func (d dirFS) Walk(context.Context, bool) (dirstore.Tree, func(), error) {
	return tree{d.Store}, func() {}, nil
}

// tree is the store's directory tree as dirstore.ListTree and SweepTree walk it.
type tree struct{ s *Store }

// OpenDir implements dirstore.Tree: the directory is reached as a
// reader's chain reaches it (no symbolic link, plain directories).
func (t tree) OpenDir(_ context.Context, p string) (dirstore.TreeDir, error) {
	root, err := t.s.openRoot(false)
	if err != nil || root == nil {
		return nil, err
	}
	if p == "" {
		return &dir{r: root}, nil
	}
	c, err := readChain(root, p+"/x") // the chain of "p/x" ends at p
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &dir{r: c.parent(), c: c}, nil
}

// PruneDir implements dirstore.Tree (see Store.removeDir and Store.prune).
func (t tree) PruneDir(ctx context.Context, p string, parents bool) {
	d, _ := t.OpenDir(ctx, p)
	if d == nil {
		return
	}
	c := d.(*dir).c
	defer c.close()
	if parents {
		t.s.prune(c, false)
		return
	}
	n := len(c.roots) - 1
	t.s.removeDir(c.roots[n-1], c.segs[n-1], p)
}

// dir is an open directory of the tree: r, reached by the chain c (nil
// for the store root, which the Store owns).
type dir struct {
	r     *os.Root
	c     *chain
	owned bool // r was opened by Sub and is closed with the dir
}

func (d *dir) Entries(_ context.Context, prefix string) ([]fs.FileInfo, error) {
	f, err := d.r.Open(".")
	if err != nil {
		return nil, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	fis := make([]fs.FileInfo, 0, len(names))
	for _, name := range names {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		fi, err := d.r.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		fis = append(fis, fi)
	}
	return fis, nil
}

func (d *dir) Sub(_ context.Context, name string) (dirstore.TreeDir, error) {
	r, err := d.r.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &dir{r: r, owned: true}, nil
}

func (d *dir) Remove(_ context.Context, name string) error { return d.r.Remove(name) }

func (d *dir) Close() {
	switch {
	case d.c != nil:
		d.c.close()
	case d.owned:
		d.r.Close()
	}
}
