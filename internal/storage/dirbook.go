package storage

import "sync"

// DirBook is what a store with directories (Properties.Directories)
// knows of the directories its writes reached, so that its cleanups
// remove only directories it created (spec section 6: cleanup removes
// only what the run provably wrote, directories included). Made holds
// those it created (whichever write did), found those that were there
// when one of its writes walked through them. A directory found but not
// made existed before the store first wrote below it: no cleanup of the
// store removes it, even empty (see MayRemove).
//
// Writes run in parallel and two may create the same directory: the one
// whose mkdir fails finds it, the one that made it notes it made, and
// made wins whatever the order of the notes. A removed directory is
// forgotten (Removed) under the same lock as the check that allowed it,
// so that a write that makes it again meanwhile is noted afresh.
//
// Keys are the store's own names for directories (store paths, or server
// paths). The zero DirBook is empty; callers hold its lock around every
// method.
type DirBook struct {
	sync.Mutex
	made, found map[string]bool
}

// Note records that a write walked through the directory dir, creating
// it when made.
func (b *DirBook) Note(dir string, made bool) {
	if b.made == nil {
		b.made, b.found = map[string]bool{}, map[string]bool{}
	}
	if made {
		b.made[dir] = true
	} else {
		b.found[dir] = true
	}
}

// Made reports whether a write of the store created dir: the cleanup of
// a failed or aborted write removes only such directories (when empty).
func (b *DirBook) Made(dir string) bool { return b.made[dir] }

// MayRemove reports whether a Delete or a sweep may remove dir once it is
// empty: the store created it, or none of its writes reached it (a
// directory emptied of files written before the store's life, by an
// earlier run).
func (b *DirBook) MayRemove(dir string) bool { return b.made[dir] || !b.found[dir] }

// Removed forgets dir, which the store removed.
func (b *DirBook) Removed(dir string) {
	delete(b.made, dir)
	delete(b.found, dir)
}
