package sftp

import "github.com/distributor-dev/distributor/internal/storage"

// checkPath is storage.CheckPath, the path rules every adapter shares.
func checkPath(p string) error { return storage.CheckPath(p) }

// splitPrefix is storage.SplitPrefix.
func splitPrefix(prefix string) (dir, filter string, err error) { return storage.SplitPrefix(prefix) }
