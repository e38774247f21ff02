package s3

import (
	"context"
	"fmt"
	"io"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Properties implements storage.Store: S3 does not stage. It has no cheap
// rename: making a staged object visible would take a server-side copy of
// every byte (or a second upload), and a PUT is atomic already. Writers
// verify their content before they write instead. PutIfVersion writes
// are one PUT each, never a multipart upload, so they leave no incomplete
// upload behind whatever happens to the writer (AtomicSmallWrites).
func (s *Store) Properties() storage.Properties {
	return storage.Properties{AtomicSmallWrites: true, ListPages: true, Metadata: true, ServerConditions: true}
}

// RewriteIf implements storage.Store: S3 does not rewrite (see
// Properties.Rewrite).
func (s *Store) RewriteIf(_ context.Context, p string, _ storage.Version, _ func(io.Reader, io.Writer) error) error {
	return storage.Unsupported(s, "rewrite-if", p)
}

// RemoveCreatedRoot implements storage.Store: a bucket has no root
// directory to remove.
func (s *Store) RemoveCreatedRoot(context.Context) (bool, error) {
	return false, storage.Unsupported(s, "remove-created-root", "")
}

// Stage implements storage.Store: it fails with storage.ErrNoStaging.
func (s *Store) Stage(_ context.Context, p string, _ io.Reader, _ int64, _ storage.PutOptions) (storage.Staged, error) {
	return nil, fmt.Errorf("%s: stage %s: %w", s, p, storage.ErrNoStaging)
}
