package storagetest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// stageTests check Store.Stage and storage.Staged. A store that cannot
// stage (Properties.Stage false) must say so with storage.ErrNoStaging and write
// nothing; the other tests are then skipped.
var stageTests = []struct {
	name string
	fn   func(t *testing.T, s storage.Store)
}{
	{"StageUnsupported", testStageUnsupported},
	{"StageInvisibleUntilCommit", testStageInvisible},
	{"StageReplaceInvisibleUntilCommit", testStageReplace},
	{"StageAbortLeavesNothing", testStageAbort},
	{"StageCreateCommitFailsWhenTaken", testStageCreateTaken},
	{"StageBadReaderLeavesNothing", testStageBadReader},
	{"StageCommitOnce", testStageCommitOnce},
	{"StageFenceLapsedLeavesNothing", testStageFenceLapsed},
}

// createOpts are the PutOptions of a write that only creates, if create.
func createOpts(create bool) storage.PutOptions {
	if create {
		return storage.PutOptions{Mode: storage.PutCreate}
	}
	return storage.PutOptions{}
}

func needStage(t *testing.T, s storage.Store) {
	t.Helper()
	if !s.Properties().Stage {
		t.Skip("the store does not stage (Properties.Stage is false)")
	}
}

func stage(t *testing.T, s storage.Store, p, data string, create bool) storage.Staged {
	t.Helper()
	g, err := s.Stage(t.Context(), p, strings.NewReader(data), int64(len(data)), createOpts(create))
	if err != nil {
		t.Fatalf("Stage(%q): %v", p, err)
	}
	return g
}

// wantNoTemp checks that no temporary object is left anywhere.
func wantNoTemp(t *testing.T, s storage.Store) {
	t.Helper()
	found, err := s.SweepTemp(t.Context(), storage.SweepOptions{DryRun: true})
	if err != nil {
		t.Fatalf("SweepTemp (dry run): %v", err)
	}
	if len(found) > 0 {
		t.Errorf("temporary objects left: %v", found)
	}
}

// wantNoDir checks that nothing, not even an empty directory, is left at
// dir: an object can be written at that very path.
func wantNoDir(t *testing.T, s storage.Store, dir string) {
	t.Helper()
	if _, err := s.Put(t.Context(), dir, strings.NewReader("f"), 1, storage.PutOptions{}); err != nil {
		t.Errorf("Put(%q) after the staged write under it was undone: %v (a directory left behind?)", dir, err)
	}
}

func testStageUnsupported(t *testing.T, s storage.Store) {
	if s.Properties().Stage {
		t.Skip("the store stages")
	}
	_, err := s.Stage(t.Context(), "a.txt", strings.NewReader("a"), 1, storage.PutOptions{Mode: storage.PutCreate})
	if !errors.Is(err, storage.ErrNoStaging) {
		t.Fatalf("Stage on a store that cannot stage: %v, want ErrNoStaging", err)
	}
	wantList(t, s, "")
	wantNoTemp(t, s)
}

func testStageInvisible(t *testing.T, s storage.Store) {
	needStage(t, s)
	g := stage(t, s, "new/dir/a.txt", "staged", true)
	wantMissing(t, s, "new/dir/a.txt")
	wantList(t, s, "")
	if err := g.Commit(t.Context()); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantContent(t, s, "new/dir/a.txt", "staged")
	wantList(t, s, "", "new/dir/a.txt")
	wantNoTemp(t, s)
	if err := g.Abort(t.Context()); err != nil {
		t.Errorf("Abort after Commit: %v, want nil (nothing to do)", err)
	}
	wantContent(t, s, "new/dir/a.txt", "staged")
}

func testStageReplace(t *testing.T, s storage.Store) {
	needStage(t, s)
	put(t, s, "r.txt", "old")
	g := stage(t, s, "r.txt", "newer", false)
	wantContent(t, s, "r.txt", "old")
	if info := stat(t, s, "r.txt"); info.Size != 3 {
		t.Errorf("Stat before Commit: size %d, want 3 (the old object)", info.Size)
	}
	wantList(t, s, "", "r.txt")
	if err := g.Commit(t.Context()); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantContent(t, s, "r.txt", "newer")
	wantNoTemp(t, s)
}

func testStageAbort(t *testing.T, s storage.Store) {
	needStage(t, s)
	put(t, s, "keep/other.txt", "other")
	g1 := stage(t, s, "n1/n2/x.txt", "x", true)
	g2 := stage(t, s, "keep/y.txt", "y", true)
	for _, g := range []storage.Staged{g1, g2} {
		if err := g.Abort(t.Context()); err != nil {
			t.Fatalf("Abort: %v", err)
		}
	}
	wantMissing(t, s, "n1/n2/x.txt")
	wantMissing(t, s, "keep/y.txt")
	wantList(t, s, "", "keep/other.txt")
	wantNoTemp(t, s)
	wantNoDir(t, s, "n1")
	if err := g1.Abort(t.Context()); err != nil {
		t.Errorf("second Abort: %v, want nil", err)
	}
	// Staged writes that share a new directory: whichever is undone last
	// removes it, even when the one that created it went first.
	g3 := stage(t, s, "shared/sub/a.txt", "a", true)
	g4 := stage(t, s, "shared/sub/b.txt", "b", false)
	for _, g := range []storage.Staged{g3, g4} {
		if err := g.Abort(t.Context()); err != nil {
			t.Fatalf("Abort: %v", err)
		}
	}
	_, err := s.Stage(t.Context(), "shared/c.txt", &failingReader{data: []byte("c"), n: 1}, 5, storage.PutOptions{Mode: storage.PutCreate})
	if err == nil {
		t.Fatalf("Stage with a failing reader succeeded")
	}
	wantNoTemp(t, s)
	wantNoDir(t, s, "shared")
	if err := g1.Commit(t.Context()); err == nil {
		t.Errorf("Commit after Abort succeeded")
	}
	wantMissing(t, s, "n1/n2/x.txt")
}

func testStageCreateTaken(t *testing.T, s storage.Store) {
	needStage(t, s)
	g := stage(t, s, "c.txt", "mine", true)
	put(t, s, "c.txt", "theirs")
	err := g.Commit(t.Context())
	if !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("create-only Commit over a name taken meanwhile: %v, want ErrPrecondition", err)
	}
	wantContent(t, s, "c.txt", "theirs")
	wantNoTemp(t, s)
}

func testStageBadReader(t *testing.T, s storage.Store) {
	needStage(t, s)
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		r    io.Reader
		size int64
	}{
		{"short", strings.NewReader("12345"), 10},
		{"long", strings.NewReader("12345678901"), 10},
		{"failing", &failingReader{data: []byte("12345"), n: 5}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, create := range []bool{true, false} {
				g, err := s.Stage(ctx, "bad/"+tc.name+"/x.txt", tc.r, tc.size, createOpts(create))
				if err == nil {
					g.Abort(ctx)
					t.Fatalf("Stage with a %s reader succeeded", tc.name)
				}
				wantMissing(t, s, "bad/"+tc.name+"/x.txt")
			}
			wantList(t, s, "")
			wantNoTemp(t, s)
		})
	}
	wantNoDir(t, s, "bad")
}

func testStageCommitOnce(t *testing.T, s storage.Store) {
	needStage(t, s)
	g := stage(t, s, "once.txt", "1", false)
	if err := g.Commit(t.Context()); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	put(t, s, "once.txt", "2")
	if err := g.Commit(t.Context()); err == nil {
		t.Errorf("second Commit succeeded")
	}
	wantContent(t, s, "once.txt", "2")
	wantNoTemp(t, s)
}

// lapsesAfter is a context whose Err turns into errLapsed after n calls
// that passed, as the lock's fenced context does for a process paused
// right after a check and resumed past its lease.
type lapsesAfter struct {
	context.Context
	n int
}

var errLapsed = errors.New("fence lapsed")

func (c *lapsesAfter) Err() error {
	if c.n == 0 {
		return errLapsed
	}
	c.n--
	return nil
}

// testStageFenceLapsed: a stage whose fence lapses after the check before
// its temporary object's create fails with the fence's error and leaves
// no temporary object: the lock's next holder swept the root before this
// one was made, and nothing else would remove it.
func testStageFenceLapsed(t *testing.T, s storage.Store) {
	needStage(t, s)
	ctx := &lapsesAfter{Context: t.Context(), n: 1}
	g, err := s.Stage(ctx, "fence/f.txt", strings.NewReader("new"), 3, storage.PutOptions{})
	if !errors.Is(err, errLapsed) {
		if g != nil {
			g.Abort(t.Context())
		}
		t.Fatalf("Stage under a fence that lapsed during it: %v, want the fence's error", err)
	}
	wantNoTemp(t, s)
}
