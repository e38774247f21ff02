//go:build !linux

package local

import (
	"errors"
	"os"
)

// canCreateAt says that staged writes create their temporary files with
// createTempAt: elsewhere they use createTemp.
const canCreateAt = false

func renameNoReplace(int, string, string) error { return errors.ErrUnsupported }

func (s *Store) createTempAt(int) (*os.File, string, error) {
	return nil, "", errors.New("createTempAt is not available on this platform")
}

// startWriteback does nothing here: the fsync or the store's Sync writes the bytes.
func startWriteback(*os.File, int64, int64) {}

// canSyncfs says the platform flushes a whole file system with one call:
// elsewhere every file is fsynced as it is written.
const canSyncfs = false

func syncfs(*os.File) error { return errors.New("syncfs is not available on this platform") }
