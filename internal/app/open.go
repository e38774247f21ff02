package app

import (
	"context"
	"fmt"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

// OpenDestination opens the storage of destination d at its resolved root
// (see storage.PathKind) with its backend's Open. getenv supplies the
// environment the backends need: SSH_AUTH_SOCK for the ssh agent, and
// the AWS credential chain's variables (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE,
// AWS_SHARED_CREDENTIALS_FILE, HOME, ...). SFTP connects here, so an
// unreachable server or an unknown SSH host key fails before anything is
// planned or written; S3 sends no request here: a command's first request
// (a run's catalog read) reports a missing bucket or rejected credentials
// just as clearly, also before anything is planned or written.
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
