// Package atomicfile replaces a file so that a reader sees the previous
// bytes or the new ones, never a part.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to a temporary file beside path, named by pattern (as
// os.CreateTemp names it), with mode 0644, syncs it and renames it over
// path. On failure the temporary file is removed.
func Write(path, pattern string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
