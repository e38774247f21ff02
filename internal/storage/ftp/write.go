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
	"slices"
	"strings"
	"time"

	ftplib "github.com/jlaffaye/ftp"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
	"github.com/distributor-dev/distributor/internal/storage/probe"
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

// ProofError reports a server that lacks a behaviour the store relies on
// (see the package doc, "No trust without proof"). Nothing was written.
type ProofError struct {
	Root      string // the store, as String gives it (the store's errors start with it)
	Behaviour string // what the server does not do
	Setting   string // the usual server settings that cause it
	Err       error  // the server's answer, if it refused
}

func (e *ProofError) Error() string {
	msg := "the server does not " + e.Behaviour
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg + "; distributor relies on it to publish atomically and keep its catalog truthful, so nothing was written; " + e.Setting
}

// Unwrap returns the server's answer.
func (e *ProofError) Unwrap() error { return e.Err }

// What the proofs find missing, and the settings that usually cause it.
const (
	replace    = "replace an existing file in one step with a rename (RNFR/RNTO)"
	replaceFix = "ProFTPD needs AllowOverwrite on; Pure-FTPd must run without --norename (-G)"
	dots       = "list files whose names start with a dot"
	dotsFix    = "vsftpd needs force_dot_files=YES; Pure-FTPd needs --displaydotfiles (-D)"
)

// writable checks the store path p of a write, once the server's behaviour
// is proven.
func (s *Store) writable(ctx context.Context, p string) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if err := s.proven(ctx); err != nil {
		return err
	}
	if s.spaceless && (strings.HasSuffix(p, " ") || strings.Contains(p, " /")) {
		return fmt.Errorf("%w: %q has a name ending in a space, which this server rewrites (Pure-FTPd: to an underscore)", storage.ErrInvalidPath, p)
	}
	return nil
}

// proven proves the server's behaviour once per store, before its first
// write (see prove): a refusal is kept, a proof that could not run (the
// network failed) is tried again by the next write. A server whose MKD
// does not fail on an existing directory is noted for CreateNew.
func (s *Store) proven(ctx context.Context) error {
	s.proofMu.Lock()
	defer s.proofMu.Unlock()
	if s.proofDone {
		return s.proofErr
	}
	err := s.prove(ctx)
	var pe *ProofError
	if errors.As(err, &s.mkdLies) {
		err = nil
	} else if err != nil && !errors.As(err, &pe) {
		return fmt.Errorf("prove the server's behaviour: %w", err)
	}
	s.proofDone, s.proofErr = true, err
	return err
}

// prove checks on scratch names in the root (temporary names: a sweep
// removes what a cut proof leaves) that a rename replaces a file in one
// step, that a listing shows dotfiles (the scratch files are dotfiles), and
// that MKD of an existing directory fails; it notes whether a created
// name's trailing space is kept. It removes the scratch names again, and,
// when it refuses the server, the directories it made for the root. The lock's holder sweeps the root
// as another process proves (before it locks): a proof whose scratch file
// vanished starts over with new names, dirstore.CreateAttempts times at
// most, as a create whose temporary file vanished does.
func (s *Store) prove(ctx context.Context) error {
	c, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	made, err := s.mkdirs(c, "x")
	defer func() {
		// A refused server keeps nothing, not even the root; a proven one
		// keeps the root it made for the write that follows: removed, it
		// would pull the directory from under another writer's proof.
		if err != nil {
			s.dirs.Undo(made, rmdir(c))
		}
		s.release(c)
	}()
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		c, err = s.proveOnce(ctx, c)
		if !errors.Is(err, dirstore.ErrTempVanished) || attempt == dirstore.CreateAttempts {
			return err
		}
	}
}

// proveOnce is one proof of prove on new scratch names. A step that fails
// because its scratch file is gone (see vanished) fails with
// dirstore.ErrTempVanished, not as the server's refusal. It returns the
// connection to go on with (see cleanup).
func (s *Store) proveOnce(ctx context.Context, c *conn) (_ *conn, err error) {
	base := path.Join(s.root, storage.TempPrefix+"proof-"+rand.Text())
	a, b, d := base+"-a", base+"-b", base+"-d " // Pure-FTPd makes "-d_"
	defer func() {
		for _, f := range []string{a, b} {
			c = s.cleanup(ctx, c, func(c *conn) error { return c.sc.Delete(f) })
		}
		rmdir(c)(d)
	}()
	for _, f := range []string{a, b} {
		if err == nil {
			err = c.do(c.sc.Stor(f, strings.NewReader(f)))
		}
	}
	if err != nil {
		return c, err
	}
	if err := c.do(c.sc.Rename(b, a)); code(err) >= 500 {
		return c, vanished(c, b, &ProofError{s.String(), replace, replaceFix, err})
	} else if err != nil {
		return c, err
	}
	resp, err := c.sc.Retr(a)
	if err != nil {
		return c, vanished(c, a, c.do(err))
	}
	got, err := io.ReadAll(io.LimitReader(resp, int64(len(b)+1)))
	if err = c.do(errors.Join(err, resp.Close())); err != nil {
		return c, err
	} else if string(got) != b {
		return c, &ProofError{s.String(), replace, replaceFix,
			errors.New("the renamed file does not hold the new content")}
	}
	if err := c.do(c.sc.MakeDir(d)); err != nil {
		return c, err
	}
	entries, err := list(c, s.root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
		if strings.HasPrefix(e.Name, path.Base(base)+"-d") {
			d = path.Join(s.root, e.Name) // what the cleanup removes
		}
	}
	switch {
	case err != nil:
		return c, err
	case !slices.Contains(names, path.Base(a)):
		return c, vanished(c, a, &ProofError{s.String(), dots, dotsFix, nil})
	case slices.Contains(names, path.Base(b)):
		return c, &ProofError{s.String(), replace, replaceFix,
			errors.New("the renamed file is still listed")}
	}
	s.spaceless = !strings.HasSuffix(d, " ")
	if err := c.do(c.sc.MakeDir(base + "-d ")); err == nil {
		return c, &probe.UnenforcedError{Root: s.String(), Capability: probe.ExclusiveCreate,
			Detail: "MKD of an existing directory succeeded, so a second lock could be made over the first"}
	} else if code(err) == 0 {
		return c, err
	}
	return c, nil
}

// vanished is err, the failure of a step on the scratch or temporary file
// f, unless f is gone (SIZE refused: a concurrent writer holding the lock
// swept it), then dirstore.ErrTempVanished, with err only as text: what
// failed was no refusal by the server.
func vanished(c *conn, f string, err error) error {
	if _, serr := c.sc.FileSize(f); refused(serr) {
		return fmt.Errorf("%w (%v)", dirstore.ErrTempVanished, err)
	}
	return err
}
