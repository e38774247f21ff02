package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// properties: local disk stages (a rename or a hard link makes a staged
// file visible), rewrites in one pass and creates its root.
var properties = storage.Properties{Stage: true, Rewrite: true, CreatesRoot: true, Directories: true}

// Properties implements storage.Store.
func (s *Store) Properties() storage.Properties { return properties }

// IsTransient implements storage.Store: the network failures of
// storage.IsTransient (a root on a network file system can see them).
func (s *Store) IsTransient(err error) bool { return storage.IsTransient(err) }

// missingDirs returns dir and its missing parents, dir first.
func missingDirs(dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// RemoveCreatedRoot implements storage.Store: if this store created its root
// and the root is empty, it removes it and each empty parent it created, and
// reports whether the root is gone (a later write creates it again). Writers
// call it after a failed change, so a failed first publish leaves no empty directory.
func (s *Store) RemoveCreatedRoot(context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.madeRoot) == 0 {
		return false, nil
	}
	if err := os.Remove(s.madeRoot[0]); err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.madeRoot = nil
			return false, nil
		case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
			return false, nil
		}
		return false, fmt.Errorf("local %s: remove the root directory it created: %w", s.path, err)
	}
	s.dirs.forget()
	if s.root != nil {
		s.root.Close()
		s.root = nil
	}
	for _, d := range s.madeRoot[1:] {
		if os.Remove(d) != nil {
			break
		}
	}
	s.madeRoot = nil
	return true, nil
}

// copyExact is dirstore.CopyExact through a stageBuf buffer: a file that fits
// takes one read to fill it, one to see the end of input, and one write (where
// io.CopyN makes 32 KiB reads and writes). It stops once ctx is done (storage.Cancelled:
// no fence check per buffer; the commit checks the fence before the change it guards).
func (s *Store) copyExact(ctx context.Context, dst io.Writer, src io.Reader, size int64) error {
	bp, _ := s.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, stageBuf)
		bp = &b
	}
	defer s.bufs.Put(bp)
	buf := *bp
	var done int64
	for {
		if err := storage.Cancelled(ctx); err != nil {
			return err
		}
		// One byte more than is left, to see the end of the input (or
		// that there is more) in the same pass.
		n, err := fill(src, buf[:min(int64(len(buf)), size-done+1)])
		if done+int64(n) > size {
			return fmt.Errorf("input is longer than %d bytes", size)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return fmt.Errorf("after %d of %d bytes: %w", done, size, werr)
			}
			done += int64(n)
		}
		switch {
		case err == nil:
		case err == io.EOF:
			if done < size {
				return fmt.Errorf("short input: got %d of %d bytes", done, size)
			}
			return storage.Cancelled(ctx)
		default:
			return fmt.Errorf("after %d of %d bytes: %w", done, size, err)
		}
	}
}

// fill reads into buf until it is full or src fails, returning src's own error
// (unlike io.ReadFull), so a reader failing with io.ErrUnexpectedEOF is not
// taken for a short input.
func fill(src io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := src.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// stageBuf is the copy buffer of a staged write.
const stageBuf = 256 << 10

// hintError says what went wrong in the operator's terms (which directory,
// which user, what to do) instead of the failed system call, to which it
// unwraps, so errors.Is(err, fs.ErrPermission) and the like hold.
type hintError struct {
	msg  string
	err  error
	root bool // the message names the store (see rootError)
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// explain translates a permission error of op on the store path p ("" or "."
// for the root) into a message naming the directory, the user and the missing
// access; any other err is returned unchanged.
func (s *Store) explain(op, p string, err error) error {
	var he *hintError
	if !errors.Is(err, fs.ErrPermission) || errors.As(err, &he) {
		return err
	}
	if q, err := strconv.Unquote(p); err == nil {
		p = q // a List's prefix
	}
	dir := s.path
	if d := path.Dir(p); p != "" && d != "." {
		dir = filepath.Join(s.path, filepath.FromSlash(d))
	}
	access := "write and search (w and x) permission on the directory " + dir
	switch op {
	case "get", "read", "open", "stat", "list": // op only reads: it lacks read access
		access = "read and search (r and x) permission on the directory " + dir + " and what it holds"
	}
	return &hintError{err: err, msg: fmt.Sprintf(
		"permission denied: %s lacks %s; grant it (chown or chmod) or run distributor as a user that has it",
		currentUser(), access)}
}

// rootError translates the failure to open or create the root directory.
// Its message names the store, so callers return it as it is.
func (s *Store) rootError(verb string, err error) error {
	hint := func(format string, args ...any) error {
		return &hintError{root: true, err: err, msg: fmt.Sprintf("local %s: "+format, append([]any{s.path}, args...)...)}
	}
	fi, serr := os.Stat(s.path)
	switch {
	case serr == nil && !fi.IsDir():
		return hint("the configured root is a %s, not a directory: set the destination's path to a directory (a missing one is created), or move the file out of the way",
			dirstore.FileKind(fi))
	case errors.Is(err, syscall.ENOTDIR):
		return hint("a parent of the configured root is a file, not a directory: set the destination's path to a directory, or move that file out of the way")
	case errors.Is(err, fs.ErrPermission) && verb == "create":
		return hint("create root: permission denied: %s lacks write and search (w and x) permission on %s, where the root is to be created; create the root for that user, or grant it (chown or chmod), or run distributor as a user that has it",
			currentUser(), existingParent(s.path))
	case errors.Is(err, fs.ErrPermission):
		return hint("open root: permission denied: %s lacks read and search (r and x) permission on the root, or search (x) permission on a directory above it; grant it (chown or chmod) or run distributor as a user that has it",
			currentUser())
	}
	return fmt.Errorf("local %s: %s root: %w", s.path, verb, err)
}

func existingParent(p string) string {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			return d
		}
	}
}

// currentUser names the user this process runs as: "user NAME (uid N)".
func currentUser() string {
	uid := os.Geteuid()
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}
