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
	"maps"
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

	mu      sync.Mutex
	written map[string][]byte
	deleted map[string]bool
	now     time.Time
}

// New returns an overlay over base.
func New(base storage.Store) *Store {
	return &Store{Base: base, written: map[string][]byte{}, deleted: map[string]bool{}, now: time.Now()}
}

func version(data []byte) storage.Version {
	sum := sha256.Sum256(data)
	return storage.Version("overlay:" + hex.EncodeToString(sum[:]))
}

// lookup returns path's bytes when written, gone when deleted, or neither.
func (s *Store) lookup(path string) (data []byte, written, gone bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.written[path]; ok {
		return d, true, false
	}
	return nil, false, s.deleted[path]
}

func notExist(path string) error {
	return fmt.Errorf("%s: %w", path, storage.ErrNotExist)
}

func (s *Store) put(path string, r io.Reader, size int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("put %s: read %d bytes, want %d", path, len(data), size)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written[path] = data
	delete(s.deleted, path)
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
	data, written, gone := s.lookup(path)
	switch {
	case written:
		return bytes.Clone(data), version(data), nil
	case gone:
		return nil, "", notExist(path)
	}
	return s.Base.Get(ctx, path)
}

// Open reads the overlay's view of path.
func (s *Store) Open(ctx context.Context, path string) (io.ReadCloser, error) {
	data, written, gone := s.lookup(path)
	switch {
	case written:
		return io.NopCloser(bytes.NewReader(data)), nil
	case gone:
		return nil, notExist(path)
	}
	return s.Base.Open(ctx, path)
}

// Stat describes the overlay's view of path.
func (s *Store) Stat(ctx context.Context, path string) (storage.Info, error) {
	data, written, gone := s.lookup(path)
	switch {
	case written:
		return storage.Info{Path: path, Size: int64(len(data)), ModTime: s.now}, nil
	case gone:
		return storage.Info{}, notExist(path)
	}
	return s.Base.Stat(ctx, path)
}

// List lists the overlay's view, in byte-wise path order.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	s.mu.Lock()
	var extra []storage.Info
	for p, data := range s.written {
		if strings.HasPrefix(p, prefix) {
			extra = append(extra, storage.Info{Path: p, Size: int64(len(data)), ModTime: s.now})
		}
	}
	deleted := maps.Clone(s.deleted)
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
	delete(s.written, path)
	s.deleted[path] = true
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
	data, written, gone := s.lookup(path)
	switch {
	case written:
		if err := fn(bytes.NewReader(data)); err != nil {
			return "", err
		}
		return version(data), nil
	case gone:
		return "", notExist(path)
	}
	return s.Base.ReadVersioned(ctx, path, fn)
}
