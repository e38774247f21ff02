package dirstore

import (
	"context"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Dirs is what a remote directory store (SFTP, FTP) knows of its
// directories, by server path: those known to exist, so that its writes
// check or make each once (forgotten when it removes one), and the Book of
// those its writes made or found, which decides what a cleanup may remove.
// The zero value with Root (the store's root) set is ready; it is safe for
// concurrent use.
type Dirs struct {
	Root string
	Book Book

	mu    sync.Mutex
	known map[string]bool
}

// Known reports whether dir is known to exist.
func (d *Dirs) Known(dir string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.known[dir]
}

// Mark records that dir exists.
func (d *Dirs) Mark(dir string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.known == nil {
		d.known = map[string]bool{}
	}
	d.known[dir] = true
}

// Forget forgets that dir and everything below it exist.
func (d *Dirs) Forget(dir string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	maps.DeleteFunc(d.known, func(k string, _ bool) bool { return k == dir || strings.HasPrefix(k, dir+"/") })
}

// Below reports whether the server path p is strictly below Root.
func (d *Dirs) Below(p string) bool {
	return p != d.Root && strings.HasPrefix(p, strings.TrimSuffix(d.Root, "/")+"/")
}

// Note records in the Book that a write walked through dir, making it when
// made; the root and its parents are not noted: no cleanup removes them.
func (d *Dirs) Note(dir string, made bool) {
	if d.Below(dir) {
		d.Book.Note(dir, made)
	}
}

// Prune removes dir and, with parents, then its parents, deepest first,
// while they are below the root, the store may remove them
// (Book.MayRemove; with madeOnly, for a failed or aborted write, Book.Made)
// and rmdir does (it fails on a directory that is not empty).
func (d *Dirs) Prune(dir string, parents, madeOnly bool, rmdir func(string) error) {
	for ; d.Below(dir); dir = path.Dir(dir) {
		if !d.Book.MayRemove(dir) || madeOnly && !d.Book.Made(dir) {
			return
		}
		d.Forget(dir)
		if rmdir(dir) != nil || !parents {
			return
		}
	}
}

// Undo removes dirs, which a failed write made (outermost first),
// innermost first, until rmdir fails (one is not empty).
func (d *Dirs) Undo(dirs []string, rmdir func(string) error) {
	for _, dir := range slices.Backward(dirs) {
		d.Forget(dir)
		if rmdir(dir) != nil {
			return
		}
	}
}

// Watch cuts a remote call whose client cannot cancel a request (SFTP,
// FTP): if ctx ends and stop has not been called storage.AnswerGrace later
// (the grace lets the answer say what the server did), cut runs, which
// closes the call's connection: other calls on it fail, the next one
// connects anew.
func Watch(ctx context.Context, cut func()) (stop func()) {
	var (
		mu    sync.Mutex
		done  bool
		timer *time.Timer
	)
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			timer = time.AfterFunc(storage.AnswerGrace, cut)
		}
	})
	return func() {
		stopAfter()
		mu.Lock()
		defer mu.Unlock()
		done = true
		if timer != nil {
			timer.Stop()
		}
	}
}
