package sftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	sftplib "github.com/pkg/sftp"

	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// dirFS is the store as dirstore.Writer writes to it: each call takes the
// current connection (reconnecting if it broke) and watches its context.
type dirFS struct{ *Store }

func (d dirFS) Wrap(op, p string, err error) error { return fmt.Errorf("%s: %s %s: %w", d, op, p, err) }

// CanLink implements dirstore.FS (see conn.canLink). Without a connection it
// says yes: Temp then fails with the connection's error.
func (d dirFS) CanLink(ctx context.Context) bool {
	c, err := d.client(ctx)
	return err != nil || c.canLink()
}

// Temp implements dirstore.FS (see begin).
func (d dirFS) Temp(ctx context.Context, p string, _ bool) (dirstore.Temp, error) {
	c, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	unwatch := watch(ctx, c)
	sc, release := c.session()
	stop := func() { unwatch(); release() }
	w, err := d.begin(c, sc, p)
	if err != nil {
		stop()
		return nil, err
	}
	w.stop = stop
	return w, nil
}

// tempWriter is a temporary file being written next to its target.
type tempWriter struct {
	s         *Store
	c         *conn
	sc        *sftplib.Client // the session of f and the write's requests (see conn.session)
	stop      func()          // stops watching the context on c (and releases sc); nil while detached
	f         *sftplib.File   // nil once closed
	tmp       string          // server path of the temporary file
	target    string          // server path of the target
	created   []string        // directories begin made, outermost first
	staged    bool            // detached once: its cleanup prunes (see Detach)
	published bool            // tmp no longer exists under its name
}

func (w *tempWriter) Write(b []byte) (int, error) { return w.f.Write(b) }

// ReadFrom lets io.Copy upload with the client's concurrent writes.
func (w *tempWriter) ReadFrom(r io.Reader) (int64, error) { return w.f.ReadFrom(r) }

// Close implements dirstore.Temp: fsync (where the server can), then close.
func (w *tempWriter) Close(bool) error {
	var err error
	if w.c.fsync {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

// Rename implements dirstore.Temp: posix-rename@openssh.com replaces the target.
func (w *tempWriter) Rename(context.Context) error {
	if err := w.sc.PosixRename(w.tmp, w.target); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	w.published = true
	return nil
}

// Link implements dirstore.Temp with hardlink@openssh.com, which fails if the
// name is taken; SFTP v3 reports that as a generic failure, so Link looks. A
// failed look is the error (the outcome is unknown; a retry establishes it); a
// gone temporary file was swept; a name gone again (its owner removed it, as a
// released lock is) means the link lost a race, not a permission: it retries.
func (w *tempWriter) Link(ctx context.Context) error {
	c := w.c
	if !c.canLink() {
		return fmt.Errorf("no %s: %w", extHardlink, errors.ErrUnsupported)
	}
	for attempt := 1; ; attempt++ {
		err := w.sc.Link(w.tmp, w.target)
		if err == nil {
			w.published = true
			w.sc.Remove(w.tmp)
			return nil
		}
		if c.linkUnsupported(err) {
			return fmt.Errorf("the server announces %s but does not support it: %w (%w)", extHardlink, errors.ErrUnsupported, err)
		}
		_, serr := w.sc.Lstat(w.target)
		switch {
		case serr == nil:
			return fmt.Errorf("%w (%v)", fs.ErrExist, err)
		case !errors.Is(serr, fs.ErrNotExist):
			return fmt.Errorf("hard-link into place failed (%v), then looking at the target: %w", err, serr)
		}
		if _, terr := w.sc.Lstat(w.tmp); errors.Is(terr, fs.ErrNotExist) {
			w.s.dirs.Forget(w.s.root) // the sweep may have pruned the directories too
			return fmt.Errorf("%w (%v)", dirstore.ErrTempVanished, err)
		}
		if attempt == 5 || errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("hard-link into place: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

func (w *tempWriter) Exists(context.Context) (bool, error) {
	_, err := w.sc.Lstat(w.target)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Detach implements dirstore.Temp: no remote handle stays open until Commit. A
// staged write's cleanup prunes the directories the store made, not only its
// own (staged writes share them: whichever is undone last removes them).
func (w *tempWriter) Detach() {
	w.stop()
	w.stop, w.staged = nil, true
}

// Attach implements dirstore.Temp on the store's current connection.
func (w *tempWriter) Attach(ctx context.Context) error {
	c, err := w.s.client(ctx)
	if err != nil {
		return err
	}
	w.c, w.sc, w.stop = c, c.sftp, watch(ctx, c)
	return nil
}

// Done implements dirstore.Temp (see cleanup).
func (w *tempWriter) Done(ctx context.Context) error {
	w.cleanup(ctx)
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	return nil
}

// begin creates the target's missing parent directories and a temporary
// file next to it. A concurrent Delete may prune a directory just made or
// checked; begin then starts over.
func (s *Store) begin(c *conn, sc *sftplib.Client, p string) (*tempWriter, error) {
	target := s.full(p)
	dir := path.Dir(target)
	var created []string
	for attempt := 1; ; attempt++ {
		made, err := s.mkdirs(c, p)
		created = append(created, made...)
		if err != nil {
			s.dirs.Undo(created, c.sftp.RemoveDirectory)
			return nil, err
		}
		f, name, err := dirstore.NewTemp(func(name string) (*sftplib.File, error) { return createExcl(sc, path.Join(dir, name)) })
		if err == nil {
			return &tempWriter{s: s, c: c, sc: sc, f: f, tmp: path.Join(dir, name), target: target, created: created}, nil
		}
		s.dirs.Forget(s.root) // one may have been removed behind our back
		if !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			s.dirs.Undo(created, c.sftp.RemoveDirectory)
			return nil, fmt.Errorf("create temporary file: %w", err)
		}
	}
}

// createExcl creates the file p with O_EXCL. SFTP v3 reports a taken name as a
// generic failure: it looks, and a name there fails with fs.ErrExist.
func createExcl(sc *sftplib.Client, p string) (*sftplib.File, error) {
	f, err := sc.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err == nil {
		return f, nil
	}
	if _, serr := sc.Lstat(p); serr == nil {
		return nil, fmt.Errorf("%w (%v)", fs.ErrExist, err)
	}
	return nil, err
}

// cleanupTimeout bounds the removal of a failed write's temporary file on
// a fresh connection (within the caller's context).
const cleanupTimeout = 5 * time.Second

// cleanup closes and removes the unpublished temporary file, then the empty
// directories begin created (staged: see Detach). If the connection died (the
// failure may be just that), it retries once on a fresh connection, unless ctx
// is done (the caller gave up: a signal must end a run within seconds); else,
// or if that fails too, the temporary file stays, for SweepTemp.
func (w *tempWriter) cleanup(ctx context.Context) {
	if w.f != nil {
		w.f.Close()
	}
	if w.published {
		return
	}
	c := w.c
	err := w.sc.Remove(w.tmp)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && connLost(c, err) {
		c.close() // mark it dead, so that client reconnects
		if ctx.Err() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
		defer cancel()
		fresh, err := w.s.client(ctx)
		if err != nil {
			return
		}
		defer watch(ctx, fresh)()
		if err := fresh.sftp.Remove(w.tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return
		}
		c = fresh
	}
	if w.staged {
		w.s.dirs.Prune(path.Dir(w.target), true, true, c.sftp.RemoveDirectory)
	} else {
		w.s.dirs.Undo(w.created, c.sftp.RemoveDirectory)
	}
}

// connLost reports whether err, of a request on c, means the connection is
// gone (not a refusal by the server): c dead, the session ended, a network failure.
func connLost(c *conn, err error) bool {
	var ne net.Error
	return c.dead.Load() || errors.Is(err, sftplib.ErrSSHFxConnectionLost) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &ne) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// mkdirs creates the missing parent directories of the store path p (the root
// like mkdir -p) and returns those it created, outermost first; each is noted in
// s.dirs, made or found. A parent that is a symbolic link fails with
// storage.ErrInvalidPath, one that is not a directory with an error naming it.
func (s *Store) mkdirs(c *conn, p string) (created []string, err error) {
	if !s.dirs.Known(s.root) {
		if created, err = s.mkdirRoot(c); err != nil {
			return nil, err
		}
	}
	made, err := s.walkParents(c, p, true)
	return append(created, made...), err
}

// walkParents checks with Lstat (never following a link) that every parent
// directory of the store path p is a plain directory, remembering those
// verified: a missing one matches fs.ErrNotExist, any other a
// *dirstore.HiddenError. With create it makes the missing ones (returning
// those it made) and notes each in s.dirs.
func (s *Store) walkParents(c *conn, p string, create bool) ([]string, error) {
	var created []string
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ {
		rel := strings.Join(segs[:i], "/")
		dir := s.full(rel)
		if s.dirs.Known(dir) {
			if create {
				s.dirs.Note(dir, false) // there, or made by an earlier write (noted then)
			}
			continue
		}
		made := false
		fi, err := c.sftp.Lstat(dir)
		// A failed Mkdir may be a concurrent one: look again. A directory
		// missing again was pruned meanwhile by a write that failed (and
		// made it): make it again.
		for try := 0; create && errors.Is(err, fs.ErrNotExist) && try < 5; try++ {
			if err = c.sftp.Mkdir(dir); err == nil && !made {
				created = append(created, dir)
				made = true
			}
			fi, err = c.sftp.Lstat(dir)
		}
		if err != nil {
			return created, fmt.Errorf("directory %s: %w", rel, err)
		}
		if err := dirstore.CheckDir(rel, fi); err != nil {
			return created, err
		}
		if create {
			s.dirs.Note(dir, made)
		}
		s.dirs.Mark(dir)
	}
	return created, nil
}

func (s *Store) mkdirRoot(c *conn) ([]string, error) {
	var missing []string
	for dir := s.root; ; dir = path.Dir(dir) {
		fi, err := c.sftp.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("root: %s is not a directory", dir)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || dir == "/" {
			return nil, fmt.Errorf("root: stat %s: %w", dir, err)
		}
		missing = append(missing, dir)
	}
	var created []string
	for _, dir := range slices.Backward(missing) {
		if err := c.sftp.Mkdir(dir); err != nil {
			if fi, serr := c.sftp.Stat(dir); serr != nil || !fi.IsDir() {
				return created, fmt.Errorf("root: mkdir %s: %w", dir, err)
			}
		} else {
			created = append(created, dir)
		}
	}
	s.dirs.Mark(s.root)
	return created, nil
}

// Walk implements dirstore.FS: the tree on the current connection, watched.
func (d dirFS) Walk(ctx context.Context, _ bool) (dirstore.Tree, func(), error) {
	c, err := d.client(ctx)
	if err != nil {
		return nil, nil, err
	}
	return dir{d.Store, c, d.root}, watch(ctx, c), nil
}

// dir is the store's directory tree on the connection c, as
// dirstore.ListTree and dirstore.SweepTree walk it, and its directory at
// the server path path.
type dir struct {
	s    *Store
	c    *conn
	path string
}

// OpenDir implements dirstore.Tree: the directory and its parents must be
// plain directories (checked with Lstat, never following a link).
func (d dir) OpenDir(_ context.Context, p string) (dirstore.TreeDir, error) {
	if p != "" {
		_, err := d.s.walkParents(d.c, p+"/x", false) // p itself and its parents
		if h := (*dirstore.HiddenError)(nil); errors.As(err, &h) || errors.Is(err, fs.ErrNotExist) || d.s.belowFile(d.c, p+"/x", err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return dir{d.s, d.c, d.s.full(p)}, nil
}

// PruneDir implements dirstore.Tree (see dirstore.Dirs.Prune).
func (d dir) PruneDir(_ context.Context, p string, parents bool) {
	d.s.dirs.Prune(d.s.full(p), parents, false, d.c.sftp.RemoveDirectory)
}

// Entries implements dirstore.TreeDir: READDIR returns each entry's own
// attributes (lstat's), so links are seen as links and never followed.
func (d dir) Entries(ctx context.Context, prefix string) ([]fs.FileInfo, error) {
	fis, err := d.c.sftp.ReadDirContext(ctx, d.path)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(fis, func(fi fs.FileInfo) bool {
		return fi.Name() == "." || fi.Name() == ".." || !strings.HasPrefix(fi.Name(), prefix)
	}), nil
}

func (d dir) Sub(_ context.Context, name string) (dirstore.TreeDir, error) {
	return dir{d.s, d.c, path.Join(d.path, name)}, nil
}

func (d dir) Remove(_ context.Context, name string) error {
	return d.c.sftp.Remove(path.Join(d.path, name))
}

func (dir) Close() {}
