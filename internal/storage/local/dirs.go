// Which directories a cleanup may remove: those this store created, never
// one it found in place when it wrote below it (see dirstore.Book).

package local

import (
	"os"
	"strings"
)

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
