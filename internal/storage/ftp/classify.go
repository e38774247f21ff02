package ftp

import (
	"context"
	"errors"
	"io"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/probe"
)

// IsTransient implements storage.Store. Never transient: storage.IsPermanent,
// a failed proof, a 5xx reply (a refusal). Transient: a 4xx reply ("try
// again": 421 closing, 425 no data connection, 426 transfer aborted, 450,
// 451, 452) and storage.IsTransient's (a reset, EOF, a timeout).
func (s *Store) IsTransient(err error) bool { return isTransient(err) }

func isTransient(err error) bool {
	var (
		pe *ProofError
		ue *probe.UnenforcedError
	)
	if err == nil || storage.IsPermanent(err) || errors.As(err, &pe) || errors.As(err, &ue) {
		return false
	}
	if c := code(err); c != 0 {
		return c >= 400 && c < 500
	}
	return storage.IsTransient(err)
}

// RewriteIf implements storage.Store: FTP does not rewrite (see Properties.Rewrite).
func (s *Store) RewriteIf(_ context.Context, p string, _ storage.Version, _ func(io.Reader, io.Writer) error) error {
	return storage.Unsupported(s, "rewrite-if", p)
}

// ListPage implements storage.Store: FTP lists no pages.
func (s *Store) ListPage(_ context.Context, prefix string, _ int) ([]storage.Info, bool, error) {
	return nil, false, storage.Unsupported(s, "list-page", prefix)
}

// RemoveCreatedRoot implements storage.Store: the first write creates an
// FTP root, but nothing removes it (Properties.CreatesRoot is false).
func (s *Store) RemoveCreatedRoot(context.Context) (bool, error) {
	return false, storage.Unsupported(s, "remove-created-root", "")
}
