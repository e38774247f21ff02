package local

import (
	"context"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Backend describes the local backend (see storage.Backend): a directory on
// this machine, with no configuration block.
func Backend() storage.Backend {
	return storage.Backend{
		Name:       "local",
		Title:      "local disk",
		Summary:    "local disk",
		Path:       storage.PathLocal,
		Jobs:       4,
		Properties: properties,
		Open:       openStore,
	}
}

// openStore opens the directory root; its Puts defer their directory fsyncs to
// Sync, which the executor calls before the catalog (see NewDeferred).
func openStore(_ context.Context, _ any, root string, _ func(string) string) (storage.Store, error) {
	return NewDeferred(root)
}
