package bundle

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// fileOpener opens a loaded bundle's files without a fresh os.Root per path:
// its directories are opened once (O_NOFOLLOW) and kept until Bundle.Close (up
// to maxOpenDirs); each open lstats every parent segment (a directory replaced
// by a symlink since is still refused). os.NewFile does not offer files to the
// runtime's poller (a regular file refuses after four fcntl calls and a
// failing epoll_ctl). Anything unusual is left to openRegular (ok false).
type fileOpener struct {
	dir string

	mu     sync.Mutex
	closed bool
	root   *cachedDir
	dirs   map[string]*cachedDir // bundle-relative directory path
	old    []*cachedDir          // replaced, closed by close
}

// maxOpenDirs bounds the directories a fileOpener keeps; beyond, each is opened per use.
const maxOpenDirs = 256

// cachedDir is an open directory of the bundle and its identity.
type cachedDir struct {
	f        *os.File
	fd       int
	dev, ino uint64
}

// open opens the clean bundle path p; ok false: the caller uses openRegular.
func (o *fileOpener) open(p string) (f *os.File, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, false
	}
	if o.root == nil {
		fd, err := openat(unix.AT_FDCWD, o.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
		if err != nil {
			return nil, false
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			unix.Close(fd)
			return nil, false
		}
		o.root = &cachedDir{f: os.NewFile(uintptr(fd), o.dir), fd: fd, dev: st.Dev, ino: st.Ino}
		o.dirs = map[string]*cachedDir{}
	}
	parent := o.root
	var temp []*cachedDir // opened beyond maxOpenDirs: closed on return
	defer func() {
		for _, d := range temp {
			d.f.Close()
		}
	}()
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		key, seg := p[:i], p[strings.LastIndexByte(p[:i], '/')+1:i]
		var st unix.Stat_t
		if unix.Fstatat(parent.fd, seg, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil, false
		}
		d := o.dirs[key]
		if d == nil || d.dev != st.Dev || d.ino != st.Ino {
			fd, ok := openSame(parent.fd, seg, unix.O_DIRECTORY, &st)
			if !ok {
				return nil, false
			}
			nd := &cachedDir{f: os.NewFile(uintptr(fd), filepath.Join(o.dir, key)), fd: fd, dev: st.Dev, ino: st.Ino}
			switch {
			case d != nil:
				o.old = append(o.old, d)
				o.dirs[key] = nd
			case len(o.dirs) >= maxOpenDirs:
				temp = append(temp, nd)
			default:
				o.dirs[key] = nd
			}
			d = nd
		}
		parent = d
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	var st unix.Stat_t
	if unix.Fstatat(parent.fd, base, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false
	}
	fd, ok := openSame(parent.fd, base, 0, &st)
	if !ok {
		return nil, false
	}
	return os.NewFile(uintptr(fd), filepath.Join(o.dir, filepath.FromSlash(p))), true
}

// openSame opens name below dirfd (O_NOFOLLOW, plus flags) if it is still
// the file st describes (same type, device and inode).
func openSame(dirfd int, name string, flags int, st *unix.Stat_t) (int, bool) {
	fd, err := openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|flags)
	if err != nil {
		return -1, false
	}
	var got unix.Stat_t
	if unix.Fstat(fd, &got) != nil || got.Mode&unix.S_IFMT != st.Mode&unix.S_IFMT || got.Dev != st.Dev || got.Ino != st.Ino {
		unix.Close(fd)
		return -1, false
	}
	return fd, true
}

// close closes every directory held; open then returns ok false.
func (o *fileOpener) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	if o.root != nil {
		o.root.f.Close()
	}
	for _, d := range o.dirs {
		d.f.Close()
	}
	for _, d := range o.old {
		d.f.Close()
	}
	o.root, o.dirs, o.old = nil, nil, nil
}

// openat is unix.Openat, retried when a signal interrupts it.
func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// walkBundleFast is walkBundle on descriptors (openat, O_NOFOLLOW): entry
// types come from the directory, only listed regular files are lstat'ed, and
// up to GOMAXPROCS goroutines walk subdirectories, since a bundle's lstats are
// most of a no-op run's system calls. ok false: walkBundle runs instead.
func walkBundleFast(ctx context.Context, dir string, m *Manifest) (unlisted []string, sizes map[string]int64, ok bool, err error) {
	fd, err := openat(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, nil, false, nil
	}
	w := &fastWalker{ctx: ctx, m: m, sizes: make(map[string]int64, len(m.Files)),
		slots: make(chan struct{}, max(runtime.GOMAXPROCS(0)-1, 0))}
	w.dir(fd, "")
	w.wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, true, err
	}
	slices.Sort(w.unlisted)
	return w.unlisted, w.sizes, true, nil
}

type fastWalker struct {
	ctx   context.Context
	m     *Manifest
	slots chan struct{} // a token per extra goroutine walking a directory
	wg    sync.WaitGroup

	mu       sync.Mutex // guards sizes and unlisted
	sizes    map[string]int64
	unlisted []string
}

// fileSize is a listed regular file's size as a directory's walk saw it.
type fileSize struct {
	path string
	size int64
}

// dir walks (and closes) the directory fd at bundle path rel ("" or ending
// in "/"), handing subdirectories to another goroutine when a slot is free.
// An unreadable directory is skipped, as in walkBundle; so is all after ctx ends.
func (w *fastWalker) dir(fd int, rel string) {
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	ents, _ := f.ReadDir(-1) // what was read before an error still counts
	var sizes []fileSize
	var unlisted []string
	for _, e := range ents {
		if w.ctx.Err() != nil {
			return
		}
		name := e.Name()
		p := rel + name
		switch t := e.Type(); {
		case t.IsDir():
			sub, err := openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
			if err != nil {
				continue
			}
			select {
			case w.slots <- struct{}{}:
				w.wg.Go(func() {
					defer func() { <-w.slots }()
					w.dir(sub, p+"/")
				})
			default:
				w.dir(sub, p+"/")
			}
		case !t.IsRegular() || p == ManifestName:
		default:
			if _, listed := w.m.Lookup(p); !listed {
				unlisted = append(unlisted, p)
				continue
			}
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
				sizes = append(sizes, fileSize{p, st.Size})
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, fs := range sizes {
		w.sizes[fs.path] = fs.size
	}
	w.unlisted = append(w.unlisted, unlisted...)
}
