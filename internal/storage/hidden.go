package storage

import (
	"errors"
	"fmt"
	"io/fs"
)

// HiddenError marks a path whose parent, on a backend with directories
// (local disk, SFTP), is not a plain directory: a symbolic link, a regular
// file, a device... Readers treat such a path as missing (see Missing),
// Delete leaves it alone, writers refuse it.
type HiddenError struct {
	Dir     string // the offending parent, relative to the root
	Symlink bool
}

// CheckDir checks that fi, the Lstat of the directory dir (a store path),
// is a plain directory; if not it returns a *HiddenError.
func CheckDir(dir string, fi fs.FileInfo) error {
	if fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	return &HiddenError{Dir: dir, Symlink: fi.Mode()&fs.ModeSymlink != 0}
}

func (e *HiddenError) Error() string {
	if e.Symlink {
		return fmt.Sprintf("%s is a symbolic link (never followed)", e.Dir)
	}
	return fmt.Sprintf("%s is not a directory", e.Dir)
}

// Unwrap makes a symbolic link in the way an invalid path (it could lead
// outside the root) and any other non-directory a plain ENOTDIR-like error.
func (e *HiddenError) Unwrap() error {
	if e.Symlink {
		return ErrInvalidPath
	}
	return errNotDir
}

var errNotDir = errors.New("not a directory")

// Missing is the error of the reader op for a path below the parent: one
// that matches ErrNotExist (not ErrInvalidPath) and says why.
func (e *HiddenError) Missing(op string) error {
	return &fs.PathError{Op: op, Path: e.Dir, Err: fmt.Errorf("%w (%v)", ErrNotExist, e)}
}

// NotObject is the error of the reader op for the store path p, whose
// Lstat fi is not a regular file: it matches ErrNotObject and ErrNotExist.
func NotObject(op, p string, fi fs.FileInfo) error {
	return &fs.PathError{Op: op, Path: p, Err: fmt.Errorf("%w: %w (a %s is not an object)", ErrNotObject, ErrNotExist, FileKind(fi))}
}

// FileKind names what fi describes: "directory", "regular file",
// "symbolic link" or "special file".
func FileKind(fi fs.FileInfo) string {
	switch {
	case fi.IsDir():
		return "directory"
	case fi.Mode().IsRegular():
		return "regular file"
	case fi.Mode()&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}
