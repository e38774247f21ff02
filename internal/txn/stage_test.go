package txn

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/storage"
)

// stageLog is a store that records stages and commits in order, and fails
// the commit of failCommit.
type stageLog struct {
	storage.Store
	failCommit string

	mu  sync.Mutex
	ops []string
}

func (s *stageLog) add(op string) { s.mu.Lock(); s.ops = append(s.ops, op); s.mu.Unlock() }

func (s *stageLog) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	g, err := s.Store.Stage(ctx, p, r, size, opts)
	if err != nil {
		return nil, err
	}
	s.add("stage " + p)
	return &loggedStaged{Staged: g, s: s, p: p}, nil
}

type loggedStaged struct {
	storage.Staged
	s *stageLog
	p string
}

func (g *loggedStaged) Commit(ctx context.Context) error {
	if g.p == g.s.failCommit {
		g.Staged.Abort(ctx)
		return errors.New("injected: commit failed")
	}
	g.s.add("commit " + g.p)
	return g.Staged.Commit(ctx)
}

// tempFiles lists the temporary files below dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && storage.IsTemp(d.Name()) {
			out = append(out, p)
		}
		return err
	})
	return out
}

// TestStagedApplyStagesAllThenCommitsByPhase: with Change.Staged every
// write is staged before the first commit, and the commits keep the phase
// order.
func TestStagedApplyStagesAllThenCommitsByPhase(t *testing.T) {
	dir, base := newRoot(t)
	st := &stageLog{Store: base}
	tx := begin(t, st, nil)
	ch := change(map[string]string{"a.txt": "a", "b/page.html": "p", "index.html": "i", "z.txt": "z"})
	for i := range ch.Writes {
		switch ch.Writes[i].Path {
		case "b/page.html":
			ch.Writes[i].Phase = 1
		case "index.html":
			ch.Writes[i].Phase = 2
		}
	}
	ch.Staged = true
	res, err := tx.Apply(ch)
	if err != nil || !res.Committed {
		t.Fatalf("apply: %v %+v", err, res)
	}
	firstCommit := slices.IndexFunc(st.ops, func(op string) bool { return strings.HasPrefix(op, "commit ") })
	if firstCommit != len(ch.Writes) {
		t.Fatalf("want %d stages, then the commits; got %v", len(ch.Writes), st.ops)
	}
	commits := st.ops[firstCommit:]
	pos := func(p string) int { return slices.Index(commits, "commit "+p) }
	if !(pos("a.txt") < pos("b/page.html") && pos("z.txt") < pos("b/page.html") && pos("b/page.html") < pos("index.html")) {
		t.Errorf("commits out of phase order: %v", commits)
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if exists(t, dir, journal.Name) {
		t.Errorf("journal left after commit")
	}
}

// TestStagedFailureLeavesNothing: content that fails while it is staged (a
// bundle file whose bytes do not match) makes nothing visible: no output,
// no catalog, no temporary file, no directory, no journal.
func TestStagedFailureLeavesNothing(t *testing.T) {
	dir, st := newRoot(t)
	tx := begin(t, st, nil)
	ch := change(map[string]string{"a.txt": "a", "new/b.txt": "b", "new/deep/c.txt": "c"})
	for i := range ch.Writes {
		if ch.Writes[i].Path == "new/deep/c.txt" {
			ch.Writes[i].Open = func(context.Context) (io.ReadCloser, error) {
				return io.NopCloser(&failing{}), nil
			}
		}
	}
	ch.Staged = true
	res, err := tx.Apply(ch)
	if err == nil || !strings.Contains(err.Error(), "no output was made visible") {
		t.Fatalf("apply: %v", err)
	}
	if len(res.Done) > 0 || len(res.RolledBack) > 0 || res.JournalKept {
		t.Errorf("result %+v: want nothing done, nothing rolled back, no journal kept", res)
	}
	for _, p := range []string{"a.txt", "new", catalog.FileName, journal.Name} {
		if exists(t, dir, p) {
			t.Errorf("%s exists after a failed staged apply", p)
		}
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

type failing struct{}

func (*failing) Read([]byte) (int, error) { return 0, errors.New("injected: sha256 mismatch") }

// TestStagedCommitFailureSettles: a commit that fails after others made
// their outputs visible settles as a failed write does: the created
// outputs are rolled back, the staged ones removed, and the journal
// dropped.
func TestStagedCommitFailureSettles(t *testing.T) {
	dir, base := newRoot(t)
	st := &stageLog{Store: base, failCommit: "b/page.html"}
	tx := begin(t, st, nil)
	ch := change(map[string]string{"a.txt": "a", "b/page.html": "p", "index.html": "i"})
	for i := range ch.Writes {
		switch ch.Writes[i].Path {
		case "b/page.html":
			ch.Writes[i].Phase = 1
		case "index.html":
			ch.Writes[i].Phase = 2
		}
	}
	ch.Staged = true
	res, err := tx.Apply(ch)
	if err == nil || !strings.Contains(err.Error(), "commit failed") {
		t.Fatalf("apply: %v", err)
	}
	if !slices.Equal(res.RolledBack, []string{"a.txt"}) || res.JournalKept {
		t.Errorf("result %+v: want a.txt rolled back, no journal kept", res)
	}
	for _, p := range []string{"a.txt", "b", "index.html", catalog.FileName, journal.Name} {
		if exists(t, dir, p) {
			t.Errorf("%s exists after the settled failure", p)
		}
	}
	if left := tempFiles(t, dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
