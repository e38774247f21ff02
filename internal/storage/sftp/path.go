package sftp

import "github.com/distributor-dev/distributor/internal/storage"

// checkPath is storage.CheckPath, the path rules every adapter shares.
func checkPath(p string) error { return storage.CheckPath(p) }
