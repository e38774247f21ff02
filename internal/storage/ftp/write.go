package ftp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	ftplib "github.com/jlaffaye/ftp"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// Put implements storage.Store with dirstore.Writer: PutCreate looks, then
// renames (safe under the destination lock); PutIfVersion compares, then
// writes (FTP carries one transfer per connection at a time).
func (s *Store) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	return s.dw.Put(ctx, p, r, size, opts)
}

// Stage implements storage.Store with dirstore.Writer: the connection goes
// back to the pool until Commit.
func (s *Store) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	return s.dw.Stage(ctx, p, r, size, opts)
}

// dirFS is the store as dirstore.Writer writes to it.
type dirFS struct{ *Store }

// Wrap implements dirstore.FS.
func (d dirFS) Wrap(op, p string, err error) error { return d.errorf(op, p, err) }

// CanLink implements dirstore.FS: FTP has no hard links.
func (dirFS) CanLink(context.Context) bool { return false }

// Temp implements dirstore.FS: MKD of the missing parents, then a STOR
// that the temporary file's Writes feed. A concurrent Delete may prune a
// directory just made: Temp then starts over.
func (d dirFS) Temp(ctx context.Context, p string, _ bool) (dirstore.Temp, error) {
	s := d.Store
	if err := s.writable(ctx, p); err != nil {
		return nil, err
	}
	c, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	w := &tempWriter{s: s, c: c, stop: watch(ctx, c), target: s.full(p)}
	w.created, err = s.inDir(c, p, func() (err error) {
		w.upload, err = start(c, tempName(w.target))
		return err
	})
	if err != nil {
		w.Done(ctx)
		return nil, fmt.Errorf("create temporary file: %w", err)
	}
	return w, nil
}

// inDir makes the missing parents of the store path p (see mkdirs), then
// runs fn in their directory, again (3 times at most) after fn's refusal:
// a Delete of this store, or of another, may have pruned a directory this
// store knew. It returns the directories it made.
func (s *Store) inDir(c *conn, p string, fn func() error) ([]string, error) {
	var made []string
	for attempt := 1; ; attempt++ {
		m, err := s.mkdirs(c, p)
		made = append(made, m...)
		if err == nil {
			err = fn()
		}
		if err == nil || !refused(err) || attempt == 3 {
			return made, err
		}
		s.forgetDirs(s.root)
	}
}

// tempName is a new temporary file's server path beside target.
func tempName(target string) string {
	return path.Join(path.Dir(target), storage.TempPrefix+rand.Text())
}

// tempWriter is a temporary file being written beside its target.
type tempWriter struct {
	*upload
	s         *Store
	c         *conn
	stop      func() // stops watching the context on c; nil while detached
	target    string
	created   []string // directories Temp made, outermost first
	staged    bool     // detached once: its cleanup prunes (see Detach)
	published bool
}

// Close implements dirstore.Temp: the end of the upload, and the server's
// verdict on it.
func (w *tempWriter) Close(bool) error { return w.finish(false) }

// Rename implements dirstore.Temp: RNFR/RNTO replaces the target.
func (w *tempWriter) Rename(context.Context) error {
	if err := w.c.do(w.c.sc.Rename(w.tmp, w.target)); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	w.published = true
	return nil
}

// Link implements dirstore.Temp: FTP has no hard links.
func (*tempWriter) Link(context.Context) error {
	return fmt.Errorf("FTP has no hard links: %w", errors.ErrUnsupported)
}

// Exists implements dirstore.Temp.
func (w *tempWriter) Exists(context.Context) (bool, error) { return taken(w.c, w.target) }

// taken reports whether an entry has the server path target: a file or
// a directory (MLST, else SIZE and CWD), or the guard of an exclusive
// create (CWD).
func taken(c *conn, target string) (bool, error) {
	var err error
	dirs := []string{guard(target)}
	if c.mlst {
		_, err = c.sc.GetEntry(target)
	} else {
		_, err = c.sc.FileSize(target)
		dirs = append([]string{target}, dirs...)
	}
	if err == nil || !refused(err) {
		return err == nil, c.do(err)
	}
	for _, d := range dirs {
		if ok, err := isDir(c, d); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// Detach implements dirstore.Temp: the connection goes back to the pool. A
// staged write's cleanup prunes the directories the store made, not only
// its own (staged writes share them: the last one undone removes them).
func (w *tempWriter) Detach() {
	w.stop()
	w.s.release(w.c)
	w.c, w.stop, w.staged = nil, nil, true
}

// Attach implements dirstore.Temp on a connection of the pool.
func (w *tempWriter) Attach(ctx context.Context) error {
	c, err := w.s.acquire(ctx)
	if err != nil {
		return err
	}
	w.c, w.stop = c, watch(ctx, c)
	return nil
}

// Done implements dirstore.Temp: the unpublished temporary file goes (on a
// fresh connection if this one died, unless ctx is done: a signal must end
// a run within seconds; else it stays for SweepTemp), then the empty
// directories Temp made (staged: see Detach).
func (w *tempWriter) Done(ctx context.Context) error {
	if w.c == nil {
		return nil
	}
	if w.upload != nil {
		w.finish(true)
		if !w.published {
			w.c = w.s.remove(ctx, w.c, w.tmp)
		}
	}
	if w.staged {
		w.s.prune(w.c, path.Dir(w.target), true)
	} else {
		w.s.removeDirs(w.c, w.created)
	}
	w.stop()
	w.s.release(w.c)
	w.c = nil
	return nil
}

// cleanupTimeout bounds the removal of a failed write's temporary file on
// a fresh connection (within the caller's context).
const cleanupTimeout = 5 * time.Second

// remove deletes the file at the server path p (missing: done) on c, or,
// when c is dead, on a fresh connection unless ctx is done; it returns
// the connection to go on with (in c's pool slot).
func (s *Store) remove(ctx context.Context, c *conn, p string) *conn {
	if !c.dead.Load() {
		if err := c.do(c.sc.Delete(p)); err == nil || !c.dead.Load() {
			return c
		}
	}
	if ctx.Err() != nil {
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	fresh, err := s.revive(ctx, c)
	if err != nil {
		return c
	}
	defer watch(ctx, fresh)()
	fresh.do(fresh.sc.Delete(p))
	return fresh
}

// OpenFile implements dirstore.FS: RETR, whose reader checks ctx on every
// Read, and ends with the server's verdict on the transfer (a cut data
// connection ends like a complete one). A missing file whose guard exists
// reads as empty (see the package doc).
func (d dirFS) OpenFile(ctx context.Context, p string, _ bool) (io.ReadCloser, error) {
	s := d.Store
	if err := checkPath(p); err != nil {
		return nil, err
	}
	c, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	stop := watch(ctx, c)
	resp, err := c.sc.Retr(s.full(p))
	if err != nil {
		_, err = s.orGuard(c, p, storage.Info{}, c.do(err))
		stop()
		s.release(c)
		if err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	return &reader{r: storage.ContextReader(ctx, resp), resp: resp, s: s, c: c, stop: stop}, nil
}

// reader is the io.ReadCloser of OpenFile.
type reader struct {
	r    io.Reader
	resp *ftplib.Response
	s    *Store
	c    *conn
	stop func()
	err  error // sticky
	done bool
}

func (r *reader) Read(b []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.r.Read(b)
	switch {
	case err == io.EOF:
		if cerr := r.end(); cerr != nil {
			err = fmt.Errorf("transfer incomplete: %w", cerr)
		}
	case err != nil:
		r.c.close()
	}
	r.err = err
	return n, err
}

// end closes the data connection, reads the server's verdict and gives the
// connection back.
func (r *reader) end() error {
	if r.done {
		return nil
	}
	r.done = true
	err := r.c.do(r.resp.Close())
	r.stop()
	r.s.release(r.c)
	return err
}

// Close implements io.Closer. A transfer the caller abandons is cut with
// its connection: FTP's abort (ABOR) is not in the client, and servers
// answer a closed data connection slowly (Pure-FTPd: seconds).
func (r *reader) Close() error {
	if !r.done {
		r.c.close()
		r.end()
	}
	return nil
}

// CreateNew implements dirstore.FS, the exclusive create of the package
// doc: MKD of the guard, a SIZE that finds no file a plain Put wrote, the
// content in a temporary file renamed onto p. A create that fails before
// its rename was sent removes its guard again.
func (d dirFS) CreateNew(ctx context.Context, p string, src *dirstore.DigestSource) error {
	s := d.Store
	if err := s.writable(ctx, p); err != nil {
		return err
	}
	c, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	stop := watch(ctx, c)
	defer func() { stop(); s.release(c) }()
	target := s.full(p)
	g := guard(target)
	made, err := s.inDir(c, p, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := c.do(c.sc.MakeDir(g))
		if err == nil {
			return nil
		}
		if held, herr := isDir(c, g); held {
			return fmt.Errorf("%w (its guard %s exists)", fs.ErrExist, g)
		} else if herr != nil {
			return herr
		}
		return fmt.Errorf("make the guard directory %s: %w", g, err)
	})
	if err != nil {
		if !errors.Is(err, fs.ErrExist) {
			s.removeDirs(c, made)
		}
		return err
	}
	var unknown bool
	c, unknown, err = s.fill(ctx, c, target, src)
	if err != nil && !unknown {
		if !errors.Is(err, fs.ErrExist) || s.mkdLies == nil {
			c = s.removeGuard(ctx, c, g)
		}
		s.removeDirs(c, made)
	}
	return err
}

// fill writes src to the server path target whose guard this process
// made: a temporary file renamed onto it, again (dirstore.CreateAttempts
// times at most) when the lock's holder swept it first. unknown: the
// rename may have happened (its answer was lost). It returns the
// connection to go on with (see remove).
func (s *Store) fill(ctx context.Context, c *conn, target string, src *dirstore.DigestSource) (_ *conn, unknown bool, err error) {
	if _, err := c.sc.FileSize(target); err == nil {
		if s.mkdLies != nil {
			return c, false, fmt.Errorf("%w: %s exists", s.mkdLies, target)
		}
		return c, false, fmt.Errorf("%w (written by a plain Put)", fs.ErrExist)
	} else if !refused(err) {
		return c, false, c.do(err)
	}
	for attempt := 1; ; attempt++ {
		u, err := start(c, tempName(target))
		if err != nil {
			return c, false, err
		}
		err = src.CopyTo(ctx, u)
		if ferr := u.finish(err != nil); err == nil {
			err = cmpErr(ferr, ctx.Err())
		}
		if err == nil {
			if err = c.do(c.sc.Rename(u.tmp, target)); err == nil {
				return c, false, nil
			} else if !refused(err) {
				return c, true, err
			}
			if _, serr := c.sc.FileSize(u.tmp); refused(serr) {
				err = fmt.Errorf("%w (%w)", dirstore.ErrTempVanished, err)
			}
		}
		c = s.remove(ctx, c, u.tmp)
		if !errors.Is(err, dirstore.ErrTempVanished) || attempt == dirstore.CreateAttempts {
			return c, false, err
		}
	}
}

// removeGuard removes the guard g of a failed create (see remove).
func (s *Store) removeGuard(ctx context.Context, c *conn, g string) *conn {
	if err := c.do(c.sc.RemoveDir(g)); err == nil || !c.dead.Load() || ctx.Err() != nil {
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	fresh, err := s.revive(ctx, c)
	if err != nil {
		return c
	}
	defer watch(ctx, fresh)()
	fresh.do(fresh.sc.RemoveDir(g))
	return fresh
}

// mkdirs makes the missing directories of the root (and its parents) and
// the parents of the store path p, noting those below the root in s.book,
// made or found; it returns those it made, outermost first.
func (s *Store) mkdirs(c *conn, p string) ([]string, error) {
	var dirs []string // outermost first
	if !s.knownDir(s.root) {
		ok, err := isDir(c, s.root)
		if err != nil {
			return nil, err
		}
		if ok {
			s.markDir(s.root)
		}
		for d := s.root; !ok && d != "/"; d = path.Dir(d) {
			dirs = append(dirs, d)
		}
		slices.Reverse(dirs)
	}
	if dir := path.Dir(p); dir != "." {
		parent := s.root
		for rel := range strings.SplitSeq(dir, "/") {
			parent = path.Join(parent, rel)
			dirs = append(dirs, parent)
		}
	}
	var made []string
	for _, dir := range dirs {
		if s.knownDir(dir) {
			continue
		}
		err := c.do(c.sc.MakeDir(dir))
		if err == nil {
			made = append(made, dir)
		} else if ok, cerr := isDir(c, dir); !ok {
			return made, fmt.Errorf("directory %s: %w", dir, cmpErr(cerr, err))
		}
		if s.below(dir) {
			s.book.Note(dir, err == nil)
		}
		s.markDir(dir)
	}
	return made, nil
}

func (s *Store) knownDir(dir string) bool {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	return s.dirs[dir]
}

func (s *Store) markDir(dir string) {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	s.dirs[dir] = true
}

// forgetDirs forgets dir and everything below it.
func (s *Store) forgetDirs(dir string) {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	maps.DeleteFunc(s.dirs, func(d string, _ bool) bool { return d == dir || strings.HasPrefix(d, dir+"/") })
}

// removeDirs removes dirs, innermost first, while they are empty (best effort).
func (s *Store) removeDirs(c *conn, dirs []string) {
	for _, dir := range slices.Backward(dirs) {
		s.forgetDirs(dir)
		if c.do(c.sc.RemoveDir(dir)) != nil {
			return
		}
	}
}

// prune removes the server directory dir, then its parents, while they are
// empty and this store may remove them (dirstore.Book.MayRemove), never the
// root; with madeOnly (a failed or aborted write) only those its writes created.
func (s *Store) prune(c *conn, dir string, madeOnly bool) {
	for d := dir; s.below(d) && s.removeDir(c, d, madeOnly); d = path.Dir(d) {
	}
}

// removeDir removes dir if it is empty and this store may (see prune),
// reporting whether it did.
func (s *Store) removeDir(c *conn, dir string, madeOnly bool) bool {
	if !s.book.MayRemove(dir) || madeOnly && !s.book.Made(dir) {
		return false
	}
	s.forgetDirs(dir)
	return c.do(c.sc.RemoveDir(dir)) == nil
}
