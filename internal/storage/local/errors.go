package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

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
