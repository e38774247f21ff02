//go:build !linux

package local

import (
	"errors"
	"os"
)

// canSyncfs says the platform flushes a whole file system with one call:
// elsewhere every file is fsynced as it is written.
const canSyncfs = false

func syncfs(*os.File) error { return errors.New("syncfs is not available on this platform") }
