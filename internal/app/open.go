package app

import (
	"context"
	"fmt"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

// OpenDestination opens d's storage at its resolved root; getenv supplies the
// environment (SSH_AUTH_SOCK, AWS credentials). SFTP connects here, S3 at the
// first read: either way bad credentials fail before anything is written.
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
