// Package faultstore wraps a storage.Store to inject failures, for tests of
// what callers leave behind when storage fails part-way.
package faultstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/distributor-dev/distributor/internal/storage"
)

// ErrInjected is the error returned by an injected failure.
var ErrInjected = errors.New("faultstore: injected failure")

// IgnoreLock is an Ignore func that exempts the root lock, its takeover
// claims and the objects of the exclusion probe a writer runs first
// (.distributor.probe-*): traffic around a run's own writes.
func IgnoreLock(op, path string) bool {
	return strings.HasPrefix(path, ".distributor.lock") || strings.HasPrefix(path, ".distributor.probe-")
}

// Store fails the FailAt-th mutating call (Put, Stage, RewriteIf, Delete;
// counting from 1) and, when Sticky is set, every mutating call after it, as a crashed
// process or a dropped connection would. FailAt 0 injects nothing. Reads pass
// through, and so do Sync and SweepTemp (through the embedded Store): they
// are neither counted, logged nor failed: FailAt numbers the writes and
// deletes of objects only.
type Store struct {
	storage.Store
	FailAt int
	Sticky bool
	// Ignore, when set, exempts matching calls: they are neither counted
	// nor failed (e.g. lock traffic, to aim at a run's own writes).
	Ignore func(op, path string) bool

	mu    sync.Mutex
	calls int
	log   []string
}

// New wraps st.
func New(st storage.Store, failAt int, sticky bool) *Store {
	return &Store{Store: st, FailAt: failAt, Sticky: sticky}
}

// Calls returns how many mutating calls were made.
func (s *Store) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Log returns the mutating calls made, as "op path", including failed ones.
func (s *Store) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

func (s *Store) fail(op, path string) error {
	if s.Ignore != nil && s.Ignore(op, path) {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.log = append(s.log, op+" "+path)
	if s.FailAt > 0 && (s.calls == s.FailAt || (s.Sticky && s.calls > s.FailAt)) {
		return fmt.Errorf("%s %s (call %d): %w", op, path, s.calls, ErrInjected)
	}
	return nil
}

// Put implements storage.Store; it counts (and logs) as a "put", or a
// "putif" with PutIfVersion.
func (s *Store) Put(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	op := "put"
	if opts.Mode == storage.PutIfVersion {
		op = "putif"
	}
	if err := s.fail(op, path); err != nil {
		return "", err
	}
	return s.Store.Put(ctx, path, r, size, opts)
}

// Stage implements storage.Store; it counts (and logs) as a "put": an
// injected failure fails the stage, so nothing becomes visible. Commit and
// Abort pass through.
func (s *Store) Stage(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	if err := s.fail("put", path); err != nil {
		return nil, err
	}
	return s.Store.Stage(ctx, path, r, size, opts)
}

// RewriteIf implements storage.Store; it counts (and logs) as a "putif".
func (s *Store) RewriteIf(ctx context.Context, path string, v storage.Version, fn func(io.Reader, io.Writer) error) error {
	if err := s.fail("putif", path); err != nil {
		return err
	}
	return s.Store.RewriteIf(ctx, path, v, fn)
}

// Delete implements storage.Store.
func (s *Store) Delete(ctx context.Context, path string) error {
	if err := s.fail("delete", path); err != nil {
		return err
	}
	return s.Store.Delete(ctx, path)
}
