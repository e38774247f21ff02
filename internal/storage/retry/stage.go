package retry

import (
	"context"
	"fmt"
	"io"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Properties implements storage.Store: the wrapped store's.
func (s *Store) Properties() storage.Properties { return s.st.Properties() }

// IsTransient implements storage.Store: the wrapped store's
// classification, which this wrapper follows.
func (s *Store) IsTransient(err error) bool { return s.st.IsTransient(err) }

// RewriteIf implements storage.Store: not retried (fn has consumed the
// object by the time an attempt fails).
func (s *Store) RewriteIf(ctx context.Context, path string, ifVersion storage.Version, fn func(io.Reader, io.Writer) error) error {
	return s.st.RewriteIf(ctx, path, ifVersion, fn)
}

// RemoveCreatedRoot implements storage.Store: the wrapped store's.
func (s *Store) RemoveCreatedRoot(ctx context.Context) (bool, error) {
	return s.st.RemoveCreatedRoot(ctx)
}

// Stage implements storage.Store. Staging writes a temporary object that
// nothing sees, so a transient failure is retried as Put's is (while r can
// be replayed). The returned Staged's Commit and Abort are not retried: a
// commit whose answer was lost has an unknown outcome, which the writer's
// cleanup establishes by looking at the path.
func (s *Store) Stage(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	b := newBody(r, false)
	c := s.call(ctx, "stage", path)
	for {
		ar := b.attempt()
		sg, err := s.st.Stage(ctx, path, ar, size, opts)
		res := b.end()
		switch {
		case err == nil:
			return sg, nil
		case res.rerr != nil, !s.st.IsTransient(err):
			return nil, c.final(err)
		}
		if why := b.unreplayable(); why != "" {
			return nil, c.final(fmt.Errorf("%w (not retried: %s)", err, why))
		}
		if err := c.again(err); err != nil {
			return nil, err
		}
		if rerr := b.rewind(); rerr != nil {
			return nil, fmt.Errorf("%w (not retried: %v)", err, rerr)
		}
	}
}
