package ftp

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	ftplib "github.com/jlaffaye/ftp"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// dirFS is the store as dirstore.Writer writes to it.
type dirFS struct{ *Store }

func (d dirFS) Wrap(op, p string, err error) error { return fmt.Errorf("%s: %s %s: %w", d, op, p, err) }

// CanLink implements dirstore.FS: FTP has no hard links.
func (dirFS) CanLink(context.Context) bool { return false }

// Temp implements dirstore.FS: MKD of the missing parents, then (the fence
// checked again) a STOR that the temporary file's Writes feed.
func (d dirFS) Temp(ctx context.Context, p string, _ bool) (dirstore.Temp, error) {
	s := d.Store
	if err := s.writable(ctx, p); err != nil {
		return nil, err
	}
	c, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	w := &tempWriter{s: s, c: c, target: s.full(p)}
	w.created, err = s.inDir(c, p, func() (err error) {
		if err = ctx.Err(); err == nil { // the fence, right before the create
			w.upload, err = start(c, tempName(w.target))
		}
		return err
	})
	if err != nil {
		w.Done(ctx)
		return nil, fmt.Errorf("create temporary file: %w", err)
	}
	return w, nil
}

func tempName(target string) string {
	return path.Join(path.Dir(target), storage.TempPrefix+rand.Text())
}

// tempWriter is a temporary file being written beside its target.
type tempWriter struct {
	*upload
	s         *Store
	c         *conn
	target    string
	created   []string // directories Temp made, outermost first
	staged    bool     // detached once: its cleanup prunes (see Detach)
	published bool
}

// Close implements dirstore.Temp: the end of the upload and the server's
// verdict on it.
func (w *tempWriter) Close(bool) error { return w.finish() }

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

// Exists implements dirstore.Temp: a file or directory (MLST, else SIZE and
// CWD) or the guard of an exclusive create has the target's name.
func (w *tempWriter) Exists(context.Context) (bool, error) {
	c, dirs := w.c, []string{guard(w.target)}
	var err error
	if c.mlst {
		_, err = c.sc.GetEntry(w.target)
	} else {
		_, err = c.sc.FileSize(w.target)
		dirs = append(dirs, w.target)
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
	w.s.release(w.c)
	w.c, w.staged = nil, true
}

// Attach implements dirstore.Temp on a connection of the pool.
func (w *tempWriter) Attach(ctx context.Context) (err error) {
	w.c, err = w.s.acquire(ctx)
	return err
}

// Done implements dirstore.Temp: the unpublished temporary file goes (see
// cleanup), then the empty directories Temp made (staged: see Detach).
func (w *tempWriter) Done(ctx context.Context) error {
	if w.c == nil {
		return nil
	}
	if w.upload != nil && !w.published {
		w.finish()
		w.c = w.s.cleanup(ctx, w.c, func(c *conn) error { return c.sc.Delete(w.tmp) })
	}
	switch {
	case w.published:
		// The file keeps its directories: an RMD would be refused (one
		// command per file of a cold publish) and forget them.
	case w.staged:
		w.s.dirs.Prune(path.Dir(w.target), true, true, rmdir(w.c))
	default:
		w.s.dirs.Undo(w.created, rmdir(w.c))
	}
	w.s.release(w.c)
	w.c = nil
	return nil
}

// cleanupTimeout bounds a failed write's cleanup on a fresh connection.
const cleanupTimeout = 5 * time.Second

// cleanup runs the removal op (a missing file or directory is no error) on
// c, or, when c is dead, on a fresh connection in its pool slot, unless ctx
// is done (a signal must end a run within seconds: what stays is for
// SweepTemp or the lock's takeover). It returns the connection to go on with
// (to release in c's stead).
func (s *Store) cleanup(ctx context.Context, c *conn, op func(*conn) error) *conn {
	if !c.dead.Load() {
		if err := c.do(op(c)); err == nil || !c.dead.Load() {
			return c
		}
	}
	if ctx.Err() != nil {
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	fresh, err := s.dial(ctx)
	if err != nil {
		return c
	}
	defer watch(ctx, fresh)()
	fresh.do(op(fresh))
	fresh.unwatch = c.unwatch // the caller's watch, which its release stops
	return fresh
}

// OpenFile implements dirstore.FS: RETR, whose reader checks ctx on every
// Read and ends with the server's verdict on the transfer (a cut data
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
	resp, err := c.sc.Retr(s.full(p))
	if err == nil {
		return &reader{r: storage.ContextReader(ctx, resp), resp: resp, s: s, c: c}, nil
	}
	_, err = s.orGuard(c, p, storage.Info{}, c.do(err))
	s.release(c)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(strings.NewReader("")), nil
}

// reader is the io.ReadCloser of OpenFile.
type reader struct {
	r    io.Reader
	resp *ftplib.Response
	s    *Store
	c    *conn
	err  error // sticky
	done bool
}

func (r *reader) Read(b []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.r.Read(b)
	if err == io.EOF {
		if cerr := r.end(); cerr != nil {
			err = fmt.Errorf("transfer incomplete: %w", cerr)
		}
	} else if err != nil {
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
	r.s.release(r.c)
	return err
}

// Close implements io.Closer. A transfer the caller abandons is cut with
// its connection: the client has no ABOR, and servers answer a closed data
// connection slowly (Pure-FTPd: seconds).
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
	defer func() { s.release(c) }()
	target := s.full(p)
	g := guard(target)
	made, err := s.inDir(c, p, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.do(c.sc.MakeDir(g)); err != nil {
			held, herr := isDir(c, g)
			if held {
				return fmt.Errorf("%w (its guard %s exists)", fs.ErrExist, g)
			}
			return fmt.Errorf("make the guard directory %s: %w", g, cmp.Or(herr, err))
		}
		return nil
	})
	var keep bool
	if err == nil {
		if c, keep, err = s.fill(ctx, c, target, src); err != nil && !keep {
			c = s.cleanup(ctx, c, func(c *conn) error { return c.sc.RemoveDir(g) })
		}
	}
	if err != nil && !keep {
		s.dirs.Undo(made, rmdir(c))
	}
	return err
}

// rmdir is RMD on c.
func rmdir(c *conn) func(string) error {
	return func(dir string) error { return c.do(c.sc.RemoveDir(dir)) }
}

// fill writes src to the server path target whose guard this process
// made: a temporary file renamed onto it, again (dirstore.CreateAttempts
// times at most) when the lock's holder swept it first. keep: the guard
// must stay (the rename's answer was lost, or the guard may be another
// writer's on a server whose MKD does not fail). It returns the connection
// to go on with (see cleanup).
func (s *Store) fill(ctx context.Context, c *conn, target string, src *dirstore.DigestSource) (_ *conn, keep bool, err error) {
	if _, err := c.sc.FileSize(target); err == nil && s.mkdLies != nil {
		return c, true, fmt.Errorf("%w: %s exists", s.mkdLies, target)
	} else if err == nil {
		return c, false, fmt.Errorf("%w (written by a plain Put)", fs.ErrExist)
	} else if !refused(err) {
		return c, false, c.do(err)
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return c, false, err
		}
		u, err := start(c, tempName(target))
		if err != nil {
			return c, false, err
		}
		err = src.CopyTo(ctx, u)
		if ferr := u.finish(); err == nil {
			err = cmp.Or(ferr, ctx.Err())
		}
		if err == nil {
			if err = c.do(c.sc.Rename(u.tmp, target)); err == nil || !refused(err) {
				return c, err != nil, err
			}
			err = vanished(c, u.tmp, err)
		}
		c = s.cleanup(ctx, c, func(c *conn) error { return c.sc.Delete(u.tmp) })
		if !errors.Is(err, dirstore.ErrTempVanished) || attempt == dirstore.CreateAttempts {
			return c, false, err
		}
	}
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
		s.dirs.Forget(s.root)
	}
}

// mkdirs makes the missing directories of the root (and its parents) and
// the parents of the store path p, noting them in s.dirs, made or found;
// it returns those it made, outermost first.
func (s *Store) mkdirs(c *conn, p string) ([]string, error) {
	var dirs []string // outermost first
	if !s.dirs.Known(s.root) {
		ok, err := isDir(c, s.root)
		if err != nil {
			return nil, err
		}
		for d := s.root; !ok && d != "/"; d = path.Dir(d) {
			dirs = append([]string{d}, dirs...)
		}
		if ok {
			s.dirs.Mark(s.root)
		}
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
		if s.dirs.Known(dir) {
			continue
		}
		err := c.do(c.sc.MakeDir(dir))
		if err == nil {
			made = append(made, dir)
		} else if ok, cerr := isDir(c, dir); !ok {
			return made, fmt.Errorf("directory %s: %w", dir, cmp.Or(cerr, err))
		}
		s.dirs.Note(dir, err == nil)
		s.dirs.Mark(dir)
	}
	return made, nil
}
