// Which directories a cleanup may remove: those this store created, never
// one it found in place when it wrote below it (see dirstore.Book).

package sftp

import "path"

// noteDir records that a write walked through (or made) the server directory
// dir; the root and its parents are not recorded: no cleanup removes them.
func (s *Store) noteDir(dir string, made bool) {
	if s.below(dir) {
		s.book.Note(dir, made)
	}
}

// prune removes the server directory dir, then its parents, while they are
// empty and this store may remove them (dirstore.Book.MayRemove), never the
// root; with madeOnly (a failed or aborted write) only those its writes created.
func (s *Store) prune(c *conn, dir string, madeOnly bool) {
	for d := dir; s.below(d); d = path.Dir(d) {
		if !s.removeDir(c, d, madeOnly) {
			return
		}
	}
}

// removeDir removes dir if it is empty and this store may (see prune), reporting whether it did.
func (s *Store) removeDir(c *conn, dir string, madeOnly bool) bool {
	if !s.book.MayRemove(dir) || madeOnly && !s.book.Made(dir) {
		return false
	}
	s.forgetDirs(dir)
	return c.sftp.RemoveDirectory(dir) == nil
}
