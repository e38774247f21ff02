package dirstore

import "sync"

// Book is what a store with directories (storage.Properties.Directories)
// knows of the directories its writes reached, so that its cleanups
// remove only directories it created (spec section 6: cleanup removes
// only what the run provably wrote, directories included). It notes the
// directories its writes created (made) and those they walked through
// that were there already (found). A directory found but not made existed
// before the store first wrote below it: no cleanup of the store removes
// it, even empty (see MayRemove).
//
// Writes run in parallel and two may create the same directory: the one
// whose mkdir fails finds it, the one that made it notes it made, and
// made wins whatever the order of the notes. Notes are never dropped, not
// even when the store removes a directory: under the destination lock a
// directory that comes back is one of the store's own writes again, and
// a monotonic book needs no lock held across the removal itself (the file
// system's rmdir of a directory that is not empty fails, which settles
// races between a cleanup and a write).
//
// Keys are the store's own names for directories (store paths, or server
// paths). The zero Book is empty and ready; it is safe for concurrent
// use.
type Book struct {
	mu          sync.Mutex
	made, found map[string]bool
}

// Note records that a write walked through the directory dir, creating
// it when made.
func (b *Book) Note(dir string, made bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
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
func (b *Book) Made(dir string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.made[dir]
}

// MayRemove reports whether a Delete or a sweep may remove dir once it is
// empty: the store created it, or none of its writes reached it (a
// directory emptied of files an earlier run wrote).
func (b *Book) MayRemove(dir string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.made[dir] || !b.found[dir]
}
