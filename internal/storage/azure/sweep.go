package azure

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Properties implements storage.Store: Azure does not stage (no cheap
// rename: a staged blob would be a server-side copy or a second upload,
// and a Put Blob is atomic already); PutIf and PutIfStream are a single
// Put Blob each; ListPage is one request; blobs are served with their
// HTTP headers; the conditions are the server's.
func (s *Store) Properties() storage.Properties {
	return storage.Properties{AtomicSmallWrites: true, ListPages: true, Metadata: true, ServerConditions: true}
}

// AtomicSmallWrites implements storage.AtomicSmallWriter: PutIf and
// PutIfStream are one Put Blob each, never blocks, so they leave nothing
// behind whatever happens to the writer.
func (s *Store) AtomicSmallWrites() bool { return true }

// Stage implements storage.Store: it fails with storage.ErrNoStaging.
func (s *Store) Stage(_ context.Context, p string, _ io.Reader, _ int64, _ bool, _ ...storage.PutOption) (storage.Staged, error) {
	return nil, fmt.Errorf("%s: stage %s: %w", s, p, storage.ErrNoStaging)
}

// SweepTemp implements storage.Store. Azure writes leave no temporary
// blob under a name.
func (s *Store) SweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	if _, err := storage.CheckSweepDirs(opts.Dirs); err != nil {
		return nil, fmt.Errorf("%s: sweep: %w", s, err)
	}
	if s.closed.Load() {
		return nil, os.ErrClosed
	}
	return nil, ctx.Err()
}
