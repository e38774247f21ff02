package sftp

import (
	"context"
	"errors"
	"io"
	"path"
	"sync"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Properties implements storage.Store: SFTP stages (a rename or a hard link
// makes a staged file visible).
func (s *Store) Properties() storage.Properties {
	return storage.Properties{Stage: true, Directories: true}
}

// RewriteIf implements storage.Store: SFTP does not rewrite (see
// Properties.Rewrite).
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

// Stage implements storage.Store: the first half of Put (PutReplace or
// PutCreate): the temporary file is written in the target's directory,
// fsynced where the server can, and closed. Commit is the rename (or hard
// link) Put ends with; Abort removes the temporary file and the
// directories Stage created that are empty. No remote file handle stays
// open between Stage and Commit; the Commit uses the store's current
// connection.
func (s *Store) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	if opts.Mode == storage.PutIfVersion {
		return nil, storage.Unsupported(s, "stage", p)
	}
	create := opts.Mode == storage.PutCreate
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
	w, err := s.begin(c, p)
	if err != nil {
		return nil, s.errorf("stage", p, err)
	}
	w.created = nil // removed by prune, whoever made them
	if err = storage.CopyExact(ctx, w.f, r, size); err == nil {
		err = w.closeFile()
	}
	if err != nil {
		w.cleanup(ctx)
		s.prune(w.c, path.Dir(w.target), true)
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
// PutCreate (which fails with storage.ErrPrecondition if the name was taken
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
	defer func() {
		if !g.w.published { // a failed commit leaves nothing either
			g.w.cleanup(ctx)
			s.prune(g.w.c, path.Dir(g.w.target), true)
		}
	}()
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
	g.w.cleanup(ctx)
	s.prune(g.w.c, path.Dir(g.w.target), true)
	return nil
}
