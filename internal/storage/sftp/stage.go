package sftp

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/distributor-dev/distributor/internal/storage"
)

// CanStage implements storage.Store: SFTP stages (a rename or a hard link
// makes a staged file visible).
func (s *Store) CanStage() bool { return true }

// Stage implements storage.Store: the first half of Put (PutNew with
// create): the temporary file is written in the target's directory,
// fsynced where the server can, and closed. Commit is the rename (or hard
// link) Put and PutNew end with; Abort removes the temporary file and the
// directories Stage created that are empty. No remote file handle stays
// open between Stage and Commit; the Commit uses the store's current
// connection.
func (s *Store) Stage(ctx context.Context, p string, r io.Reader, size int64, create bool, _ ...storage.PutOption) (storage.Staged, error) {
	if err := checkWrite(p, size); err != nil {
		return nil, s.errorf("stage", p, err)
	}
	c, err := s.client(ctx)
	if err != nil {
		return nil, s.errorf("stage", p, err)
	}
	defer watch(ctx, c)()
	s.writes.RLock()
	defer s.writes.RUnlock()
	w, err := s.stage(ctx, c, p, r, size)
	if err != nil {
		return nil, s.errorf("stage", p, err)
	}
	return &staged{w: w, p: p, create: create}, nil
}

// staged is a staged write on SFTP.
type staged struct {
	w      *tempWriter
	p      string
	create bool

	mu   sync.Mutex
	done bool // committed or aborted
}

// errStagedDone is the error of a second Commit.
var errStagedDone = errors.New("staged write already committed or aborted")

// Commit implements storage.Staged: the rename or hard link of Put or
// PutNew (which fails with storage.ErrPrecondition if the name was taken
// meanwhile). Whatever its outcome, the temporary file is removed.
func (g *staged) Commit(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.w.s
	if g.done {
		return s.errorf("commit", g.p, errStagedDone)
	}
	g.done = true
	c, err := s.client(ctx)
	if err != nil {
		return s.errorf("commit", g.p, err)
	}
	defer watch(ctx, c)()
	s.writes.RLock()
	defer s.writes.RUnlock()
	g.w.c = c
	defer g.w.cleanup()
	if err := g.w.publish(ctx, g.create); err != nil {
		return s.errorf("commit", g.p, err)
	}
	return nil
}

// Abort implements storage.Staged: it removes the temporary file and the
// directories Stage created, if empty (on a fresh connection if the one
// it was written on died).
func (g *staged) Abort(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return nil
	}
	g.done = true
	s := g.w.s
	c, err := s.client(ctx)
	if err != nil {
		return s.errorf("abort", g.p, err)
	}
	defer watch(ctx, c)()
	s.writes.RLock()
	defer s.writes.RUnlock()
	g.w.c = c
	g.w.cleanup()
	return nil
}
