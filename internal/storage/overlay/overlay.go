// Package overlay is a storage.Store that records writes and deletes in
// memory over a store it only reads, so that a dry run can run crash
// recovery and read the root as it would have left it.
package overlay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Store reads through to Base, except for the paths written or deleted
// through it; Base is never changed.
type Store struct {
	Base storage.Store

	mu  sync.Mutex
	own map[string][]byte // the paths written through it; nil: deleted
	now time.Time
}

// New returns an overlay over base.
func New(base storage.Store) *Store {
	return &Store{Base: base, own: map[string][]byte{}, now: time.Now()}
}

func version(data []byte) storage.Version {
	sum := sha256.Sum256(data)
	return storage.Version("overlay:" + hex.EncodeToString(sum[:]))
}

// lookup returns path's bytes when written through the overlay, an error
// matching storage.ErrNotExist when deleted through it; !own: Base answers.
func (s *Store) lookup(path string) (data []byte, own bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if data, own = s.own[path]; own && data == nil {
		err = fmt.Errorf("%s: %w", path, storage.ErrNotExist)
	}
	return data, own, err
}

func (s *Store) put(path string, r io.Reader, size int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("put %s: read %d bytes, want %d", path, len(data), size)
	}
	if data == nil {
		data = []byte{} // not deleted
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.own[path] = data
	return data, nil
}

// Put records the object in memory, if opts.Mode's condition holds.
func (s *Store) Put(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	switch opts.Mode {
	case storage.PutCreate:
		if _, err := s.Stat(ctx, path); err == nil {
			return "", fmt.Errorf("put-new %s: %w", path, storage.ErrPrecondition)
		}
	case storage.PutIfVersion:
		_, cur, err := s.Get(ctx, path)
		if err != nil && !errors.Is(err, storage.ErrNotExist) {
			return "", err
		}
		if cur != opts.Version {
			return "", fmt.Errorf("put-if %s: %w", path, storage.ErrPrecondition)
		}
	}
	data, err := s.put(path, r, size)
	if err != nil || opts.Mode != storage.PutIfVersion {
		return "", err
	}
	return version(data), nil
}

// Get reads the overlay's view of path.
func (s *Store) Get(ctx context.Context, path string) ([]byte, storage.Version, error) {
	if data, own, err := s.lookup(path); err != nil {
		return nil, "", err
	} else if own {
		return bytes.Clone(data), version(data), nil
	}
	return s.Base.Get(ctx, path)
}

// Open reads the overlay's view of path.
func (s *Store) Open(ctx context.Context, path string) (io.ReadCloser, error) {
	if data, own, err := s.lookup(path); err != nil {
		return nil, err
	} else if own {
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	return s.Base.Open(ctx, path)
}

// Stat describes the overlay's view of path.
func (s *Store) Stat(ctx context.Context, path string) (storage.Info, error) {
	if data, own, err := s.lookup(path); err != nil {
		return storage.Info{}, err
	} else if own {
		return storage.Info{Path: path, Size: int64(len(data)), ModTime: s.now}, nil
	}
	return s.Base.Stat(ctx, path)
}

// List lists the overlay's view, in byte-wise path order.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	s.mu.Lock()
	var extra []storage.Info
	deleted := map[string]bool{}
	for p, data := range s.own {
		if data == nil {
			deleted[p] = true
		} else if strings.HasPrefix(p, prefix) {
			extra = append(extra, storage.Info{Path: p, Size: int64(len(data)), ModTime: s.now})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(extra, func(a, b storage.Info) int { return strings.Compare(a.Path, b.Path) })
	i := 0
	err := s.Base.List(ctx, prefix, func(info storage.Info) error {
		for i < len(extra) && extra[i].Path < info.Path {
			if err := fn(extra[i]); err != nil {
				return err
			}
			i++
		}
		if i < len(extra) && extra[i].Path == info.Path {
			i++
			return fn(extra[i-1])
		}
		if deleted[info.Path] {
			return nil
		}
		return fn(info)
	})
	if err != nil {
		return err
	}
	for ; i < len(extra); i++ {
		if err := fn(extra[i]); err != nil {
			return err
		}
	}
	return nil
}

// Delete records that path is gone.
func (s *Store) Delete(_ context.Context, path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.own[path] = nil
	return nil
}

// Properties are Base's, less staging, rewrites, list pages and creating a
// root (recovery, the overlay's only user, writes no outputs).
func (s *Store) Properties() storage.Properties {
	p := s.Base.Properties()
	p.Stage, p.Rewrite, p.ListPages, p.CreatesRoot = false, false, false, false
	return p
}

// RewriteIf implements storage.Store: it is not supported.
func (s *Store) RewriteIf(_ context.Context, path string, _ storage.Version, _ func(io.Reader, io.Writer) error) error {
	return storage.Unsupported(s, "rewrite-if", path)
}

// ListPage implements storage.Store: it is not supported.
func (s *Store) ListPage(_ context.Context, prefix string, _ int) ([]storage.Info, bool, error) {
	return nil, false, storage.Unsupported(s, "list-page", prefix)
}

// RemoveCreatedRoot implements storage.Store: it is not supported.
func (s *Store) RemoveCreatedRoot(context.Context) (bool, error) {
	return false, storage.Unsupported(s, "remove-created-root", "")
}

// IsTransient is Base's (the overlay's own writes do not fail on the way).
func (s *Store) IsTransient(err error) bool { return s.Base.IsTransient(err) }

// Stage implements storage.Store: it fails with storage.ErrNoStaging.
func (s *Store) Stage(_ context.Context, path string, _ io.Reader, _ int64, _ storage.PutOptions) (storage.Staged, error) {
	return nil, fmt.Errorf("stage %s: %w", path, storage.ErrNoStaging)
}

// Sync does nothing: nothing is written.
func (s *Store) Sync(context.Context) error { return nil }

// SweepTemp finds Base's temporary objects; it never removes them.
func (s *Store) SweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	opts.DryRun = true
	return s.Base.SweepTemp(ctx, opts)
}

// String describes Base.
func (s *Store) String() string { return s.Base.String() }

// Close does nothing: Base stays open for its owner to close.
func (s *Store) Close() error { return nil }

// ReadVersioned streams the overlay's view of path to fn.
func (s *Store) ReadVersioned(ctx context.Context, path string, fn func(r io.Reader) error) (storage.Version, error) {
	data, own, err := s.lookup(path)
	switch {
	case err != nil:
		return "", err
	case !own:
		return s.Base.ReadVersioned(ctx, path, fn)
	}
	if err := fn(bytes.NewReader(data)); err != nil {
		return "", err
	}
	return version(data), nil
}
