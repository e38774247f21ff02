package app

import (
	"context"
	"fmt"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
)

// OpenDestination opens the storage of destination d at its resolved root
// (a directory for local and sftp, a key prefix for s3). getenv supplies
// the environment the backends need: SSH_AUTH_SOCK for the ssh agent, and
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
	switch d.Backend {
	case config.BackendLocal:
		return local.NewDeferred(root) // the executor calls Sync before the catalog
	case config.BackendSFTP:
		if d.SFTP == nil {
			return nil, fmt.Errorf("destination %s: backend sftp without an sftp block", d.ID)
		}
		return sftp.New(ctx, SFTPOptions(d.SFTP, root, getenv))
	case config.BackendS3:
		if d.S3 == nil {
			return nil, fmt.Errorf("destination %s: backend s3 without an s3 block", d.ID)
		}
		return s3.New(ctx, S3Options(d.S3, root, getenv))
	default:
		return nil, fmt.Errorf("destination %s: backend %q: %w", d.ID, d.Backend, ErrBackendUnsupported)
	}
}

// SFTPOptions maps an sftp block and a resolved root to the adapter's
// options. The agent socket comes from SSH_AUTH_SOCK.
func SFTPOptions(c *config.SFTP, root string, getenv func(string) string) sftp.Options {
	return sftp.Options{
		Host:           c.Host,
		Port:           c.Port,
		User:           c.User,
		IdentityFile:   c.IdentityFile,
		AgentSocket:    getenv("SSH_AUTH_SOCK"),
		KnownHostsFile: c.KnownHostsFile,
		Root:           root,

		DialTimeout:       c.DialTimeout,
		KeepaliveInterval: c.KeepaliveInterval,
		KeepaliveTimeout:  c.KeepaliveTimeout,
	}
}

// S3Options maps an s3 block and a resolved root (the key prefix) to the
// adapter's options. Credentials come from the AWS chain through getenv,
// never from the configuration.
func S3Options(c *config.S3, root string, getenv func(string) string) s3.Options {
	return s3.Options{
		Bucket:    c.Bucket,
		Prefix:    root,
		Region:    c.Region,
		Endpoint:  c.Endpoint,
		PathStyle: c.PathStyle,
		Getenv:    getenv,

		DialTimeout:     c.DialTimeout,
		ResponseTimeout: c.ResponseTimeout,
		IdleTimeout:     c.IdleTimeout,
		// One retry layer, not two stacked: App.DefaultOpenStore wraps the
		// store in retry.Store, so minio-go sends each request once.
		MaxAttempts: 1,
		// Every command's first request (a run's: the catalog read) checks
		// the endpoint, bucket and credentials, with the same explanation
		// as a check at open would give, before anything is planned or
		// written: no separate listing request for it.
		SkipCheck: true,
	}
}
