package sftp

import (
	"context"
	"crypto/rand"
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

	"github.com/distributor-dev/distributor/internal/storage"
)

// Put implements storage.Store: see the package documentation. If r fails,
// yields more or fewer than size bytes, or ctx is cancelled, the temporary
// file is removed and the old object, or none, remains.
//
// With PutCreate the complete temporary file is hard-linked to the name
// (hardlink@openssh.com refuses a taken name: the error then matches
// storage.ErrPrecondition). A server without that extension gets a look,
// then the rename (safe under the destination lock); so does a server that
// announces it but answers the link with SSH_FX_OP_UNSUPPORTED (see
// conn.linkUnsupported). With PutIfVersion, see putIfVersion.
func (s *Store) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion {
		return s.putIfVersion(ctx, p, r, size, opts.Version)
	}
	if err := s.put(ctx, p, r, size, opts.Mode == storage.PutCreate); err != nil {
		return "", s.errorf(opts.Mode.Op(), p, err)
	}
	return "", nil
}

func (s *Store) put(ctx context.Context, p string, r io.Reader, size int64, exclusive bool) error {
	if err := checkWrite(p, size); err != nil {
		return err
	}
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	s.writes.RLock()
	defer s.writes.RUnlock()
	w, err := s.stage(ctx, c, p, r, size)
	if err != nil {
		return err
	}
	defer w.cleanup(ctx)
	return w.publish(ctx, exclusive)
}

// checkWrite checks the path and size of a write.
func checkWrite(p string, size int64) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("negative size %d", size)
	}
	return nil
}

// stage is the first half of put: the content written to a temporary file
// next to the target, fsynced (where the server can) and closed. The
// caller defers cleanup.
func (s *Store) stage(ctx context.Context, c *conn, p string, r io.Reader, size int64) (*tempWriter, error) {
	w, err := s.begin(c, p)
	if err != nil {
		return nil, err
	}
	if err = storage.CopyExact(ctx, w.f, r, size); err == nil {
		err = w.closeFile()
	}
	if err != nil {
		w.cleanup(ctx)
		return nil, err
	}
	return w, nil
}

// publish is the second half of put: the complete temporary file renamed
// onto the target's name or, when exclusive, hard-linked to it (see
// PutCreate), unless ctx is done.
func (w *tempWriter) publish(ctx context.Context, exclusive bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := w.c
	if exclusive {
		if c.canLink() {
			err := c.sftp.Link(w.tmp, w.target)
			switch {
			case err == nil:
				w.published = true
				c.sftp.Remove(w.tmp)
				return nil
			case c.linkUnsupported(err):
				// Announced, but not done: look, then rename, as on a
				// server without the extension.
			default:
				// SFTP v3 reports a taken name as a generic failure: look.
				// If the look fails too (the connection dropped), that is
				// the error to report: it may be transient, the outcome is
				// unknown, and a retry establishes it.
				_, serr := c.sftp.Lstat(w.target)
				switch {
				case serr == nil:
					return fmt.Errorf("%w: an entry exists", storage.ErrPrecondition)
				case !errors.Is(serr, fs.ErrNotExist):
					return fmt.Errorf("hard-link into place failed (%v), then looking at the target: %w", err, serr)
				}
				return fmt.Errorf("hard-link into place: %w", err)
			}
		}
		if _, err := c.sftp.Lstat(w.target); err == nil {
			return fmt.Errorf("%w: an entry exists", storage.ErrPrecondition)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return w.rename(ctx)
}

// tempWriter is a temporary file being written next to its target.
type tempWriter struct {
	s         *Store
	c         *conn
	f         *sftplib.File // nil once closed
	tmp       string        // server path of the temporary file
	target    string        // server path of the target
	created   []string      // directories begin made, outermost first
	published bool          // tmp no longer exists under its name
}

// begin creates the target's missing parent directories and a temporary
// file next to it. A concurrent Delete may prune a directory just made or
// checked; begin then starts over.
func (s *Store) begin(c *conn, p string) (*tempWriter, error) {
	target := s.full(p)
	dir := path.Dir(target)
	var created []string
	for attempt := 1; ; attempt++ {
		made, err := s.mkdirs(c, p)
		created = append(created, made...)
		if err != nil {
			s.removeDirs(c, created)
			return nil, err
		}
		f, tmp, err := createTemp(c, dir)
		if err == nil {
			return &tempWriter{s: s, c: c, f: f, tmp: tmp, target: target, created: created}, nil
		}
		s.forgetParents(p)
		if !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			s.removeDirs(c, created)
			return nil, fmt.Errorf("create temporary file: %w", err)
		}
	}
}

// createTemp creates a new, empty temporary file in the server directory
// dir.
func createTemp(c *conn, dir string) (*sftplib.File, string, error) {
	for range 5 {
		tmp := path.Join(dir, storage.TempPrefix+rand.Text())
		f, err := c.sftp.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
		if err == nil {
			return f, tmp, nil
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, "", err
		}
		// SFTP v3 reports an existing name as a generic failure: a random
		// name collision is all but impossible, so any other error is
		// retried only a few times.
		if _, serr := c.sftp.Lstat(tmp); serr != nil {
			return nil, "", err
		}
	}
	return nil, "", errors.New("cannot create a unique temporary file")
}

// writeTemp is begin, then the content written to the temporary file,
// which is fsynced (where the server can) and closed. The caller defers
// cleanup.
func (s *Store) writeTemp(ctx context.Context, c *conn, p string, src *storage.DigestSource) (*tempWriter, error) {
	w, err := s.begin(c, p)
	if err != nil {
		return nil, err
	}
	if err = src.CopyTo(ctx, w.f); err == nil {
		err = w.closeFile()
	}
	if err != nil {
		w.cleanup(ctx)
		return nil, err
	}
	return w, nil
}

// rename moves the complete temporary file onto the target's name,
// replacing any object there, unless ctx is done.
func (w *tempWriter) rename(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := w.c.sftp.PosixRename(w.tmp, w.target); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	w.published = true
	return nil
}

// closeFile fsyncs (where the server can) and closes the temporary file.
func (w *tempWriter) closeFile() error {
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

// cleanupTimeout bounds the removal of a failed write's temporary file on
// a fresh connection (within the caller's context).
const cleanupTimeout = 5 * time.Second

// cleanup closes and removes the temporary file unless it was published,
// then (after a failure) removes the directories begin created if empty.
// If the connection died (the failure may be just that), it retries once
// on a fresh connection, unless ctx is done (the caller gave up: a signal
// must end a run within seconds); otherwise, or if that fails too, the
// temporary file stays, for SweepTemp.
func (w *tempWriter) cleanup(ctx context.Context) {
	if w.f != nil {
		w.f.Close()
	}
	if w.published {
		return
	}
	c := w.c
	err := c.sftp.Remove(w.tmp)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && connLost(c, err) {
		c.close() // mark it dead, so that client reconnects
		if ctx.Err() != nil {
			// The caller gave up (a signal, a deadline): no reconnecting
			// on its behalf. The temporary file stays for the next
			// writer's sweep.
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
	w.s.removeDirs(c, w.created)
}

// connLost reports whether err, from a request on c, means that the
// connection is gone (rather than a refusal by the server): c is known
// dead, the session ended, or the network failed under it.
func connLost(c *conn, err error) bool {
	var ne net.Error
	return c.dead.Load() || errors.Is(err, sftplib.ErrSSHFxConnectionLost) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &ne) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// mkdirs makes sure the parent directories of the store path p exist,
// creating the missing ones, and returns the server paths of those it
// created, outermost first; each is noted in s.book, made or found. A
// parent that is a symbolic link fails with storage.ErrInvalidPath, one
// that is not a directory with an error naming it. The root itself (and
// its parents) is created like mkdir -p.
func (s *Store) mkdirs(c *conn, p string) ([]string, error) {
	var created []string
	if !s.knownDir(s.root) {
		made, err := s.mkdirRoot(c)
		if err != nil {
			return nil, err
		}
		created = append(created, made...)
	}
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ {
		dir := s.full(strings.Join(segs[:i], "/"))
		if s.knownDir(dir) {
			s.noteDir(dir, false) // there, or made by an earlier write (noted then)
			continue
		}
		made := false
		fi, err := c.sftp.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			err = c.sftp.Mkdir(dir)
			if err == nil {
				created = append(created, dir)
				made = true
			}
			// An error may be a concurrent Mkdir: look again.
			fi, err = c.sftp.Lstat(dir)
		}
		if err != nil {
			return created, fmt.Errorf("directory %s: %w", strings.Join(segs[:i], "/"), err)
		}
		if err := storage.CheckDir(strings.Join(segs[:i], "/"), fi); err != nil {
			return created, err
		}
		s.noteDir(dir, made)
		s.markDir(dir)
	}
	return created, nil
}

// mkdirRoot creates the root and its missing parents.
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
	s.markDir(s.root)
	return created, nil
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

// forgetParents forgets the parent directories of the store path p, the
// root for a path at the root (and everything below them): one of them may
// have been removed behind this Store's back.
func (s *Store) forgetParents(p string) {
	top, _, ok := strings.Cut(p, "/")
	if !ok {
		s.forgetDirs(s.root)
		return
	}
	s.forgetDirs(s.full(top))
}

// forgetDirs forgets dir and everything below it.
func (s *Store) forgetDirs(dir string) {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	for d := range s.dirs {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			delete(s.dirs, d)
		}
	}
}

// removeDirs removes the given directories, innermost first, while they are
// empty (best effort).
func (s *Store) removeDirs(c *conn, dirs []string) {
	for _, dir := range slices.Backward(dirs) {
		s.forgetDirs(dir)
		if c.sftp.RemoveDirectory(dir) != nil {
			return
		}
	}
}
