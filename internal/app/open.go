package app

import (
	"context"
	"fmt"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

// OpenDestination opens the storage of destination d at its resolved root
// (see storage.PathKind) with its backend's Open; getenv supplies the
// environment (SSH_AUTH_SOCK, the AWS credential chain). SFTP connects
// here; S3 sends no request until the command's first read. Either way a
// bad server or credentials fail before anything is planned or written.
func OpenDestination(ctx context.Context, d *config.Destination, root string, getenv func(string) string) (storage.Store, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	b, ok := registry.Lookup(d.Backend)
	if !ok {
		return nil, fmt.Errorf("destination %s: backend %q: %w", d.ID, d.Backend, ErrBackendUnsupported)
	}
	return b.Open(ctx, d.Settings, root, getenv)
}
