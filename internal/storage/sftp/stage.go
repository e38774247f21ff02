package sftp

import (
	"context"
	"io"

	"github.com/distributor-dev/distributor/internal/storage"
)

// properties: SFTP stages (a rename or a hard link makes a staged file visible).
var properties = storage.Properties{Stage: true, Directories: true, Remote: true}

// Properties implements storage.Store.
func (s *Store) Properties() storage.Properties { return properties }

// RewriteIf implements storage.Store: SFTP does not rewrite (see Properties.Rewrite).
func (s *Store) RewriteIf(_ context.Context, p string, _ storage.Version, _ func(io.Reader, io.Writer) error) error {
	return storage.Unsupported(s, "rewrite-if", p)
}

// ListPage implements storage.Store: SFTP lists no pages.
func (s *Store) ListPage(_ context.Context, prefix string, _ int) ([]storage.Info, bool, error) {
	return nil, false, storage.Unsupported(s, "list-page", prefix)
}

// RemoveCreatedRoot implements storage.Store: an SFTP root must exist.
func (s *Store) RemoveCreatedRoot(context.Context) (bool, error) {
	return false, storage.Unsupported(s, "remove-created-root", "")
}

// Stage implements storage.Store with dirstore.Writer: no remote file handle
// stays open until Commit, which uses the store's current connection.
func (s *Store) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	return s.dw.Stage(ctx, p, r, size, opts)
}
