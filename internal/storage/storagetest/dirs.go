package storagetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// MakeDir creates, behind the store's back, the empty directory dir (a
// store path) of the store s and its missing parents, as an operator's
// mkdir -p does before any run.
type MakeDir func(t *testing.T, s storage.Store, dir string)

// WithMakeDir lets the suite check, on a store with directories
// (Properties.Directories), that no cleanup removes a directory that was
// there before the store wrote below it. Without it those tests are
// skipped.
func WithMakeDir(mk MakeDir) Option {
	return func(c *config) { c.makeDir = mk }
}

// dirTests check that Abort, Delete and SweepTemp remove only the
// directories the store created: spec section 6, "cleanup removes only
// what the run provably wrote", directories included.
var dirTests = []struct {
	name       string
	needsPlant bool
	fn         func(t *testing.T, s storage.Store, mk MakeDir, plant PlantTemp)
}{
	{"AbortKeepsExistingDirs", false, testAbortKeepsDirs},
	{"DeleteKeepsExistingDirs", false, testDeleteKeepsDirs},
	{"SweepKeepsExistingDirs", true, testSweepKeepsDirs},
}

// runDirTests runs dirTests (see Run).
func runDirTests(t *testing.T, newStore func(t *testing.T) storage.Store, cfg config) {
	for _, tc := range dirTests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			switch {
			case !s.Properties().Directories:
				t.Skip("the store has no directories (Properties.Directories)")
			case cfg.makeDir == nil:
				t.Skip("the adapter's tests give no way to make a directory behind the store's back (WithMakeDir)")
			case tc.needsPlant && cfg.plantTemp == nil:
				t.Skip("the adapter's tests give no way to plant a temporary object (WithPlantTemp)")
			}
			tc.fn(t, s, cfg.makeDir, cfg.plantTemp)
		})
	}
}

// existingDirs are the empty directories the dirTests make first, and
// what List shows of them (an empty directory, see Store.List).
var (
	existingDirs = []string{"pre", "deep/er"}
	existingList = []string{"deep/er/", "pre/"}
)

// testAbortKeepsDirs stages, in parallel, writes into existing empty
// directories, into new directories below them and into a new tree (the
// writes of one new directory racing to create it), then aborts them all
// in parallel: the existing directories stay, every directory the writes
// created goes. Stages that fail on their reader clean up the same way.
func testAbortKeepsDirs(t *testing.T, s storage.Store, mk MakeDir, _ PlantTemp) {
	needStage(t, s)
	ctx := t.Context()
	for _, d := range existingDirs {
		mk(t, s, d)
	}
	wantList(t, s, "", existingList...)
	var paths []string
	for i := range 4 {
		paths = append(paths, fmt.Sprintf("pre/a%d.txt", i), fmt.Sprintf("pre/new/b%d.txt", i),
			fmt.Sprintf("deep/er/c%d.txt", i), fmt.Sprintf("fresh/sub/d%d.txt", i))
	}
	staged := make([]storage.Staged, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() {
			g, err := s.Stage(ctx, p, strings.NewReader(p), int64(len(p)), createOpts(i%2 == 0))
			if err != nil {
				t.Errorf("Stage(%q): %v", p, err)
				return
			}
			staged[i] = g
		})
	}
	for _, p := range []string{"pre/bad.txt", "pre/badnew/x.txt", "deep/er/bad.txt"} {
		wg.Go(func() {
			if _, err := s.Stage(ctx, p, &failingReader{data: []byte("x"), n: 1}, 5, createOpts(true)); err == nil {
				t.Errorf("Stage(%q) with a failing reader succeeded", p)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, g := range staged {
		wg.Go(func() {
			if err := g.Abort(ctx); err != nil {
				t.Errorf("Abort: %v", err)
			}
		})
	}
	wg.Wait()
	wantList(t, s, "", existingList...)
	wantNoTemp(t, s)
}

// testDeleteKeepsDirs writes (staged and committed, or put) into existing
// empty directories and into new ones, then deletes every file it wrote,
// as the rollback of a failed run does: the existing directories stay,
// the new ones go.
func testDeleteKeepsDirs(t *testing.T, s storage.Store, mk MakeDir, _ PlantTemp) {
	ctx := t.Context()
	for _, d := range existingDirs {
		mk(t, s, d)
	}
	written := []string{"pre/put.txt", "pre/new/put.txt", "deep/er/put.txt", "fresh/sub/put.txt"}
	for _, p := range written {
		put(t, s, p, p)
	}
	if s.Properties().Stage {
		for _, p := range []string{"pre/staged.txt", "deep/er/staged/x.txt"} {
			if err := stage(t, s, p, p, true).Commit(ctx); err != nil {
				t.Fatalf("Commit(%q): %v", p, err)
			}
			written = append(written, p)
		}
	}
	for _, p := range written {
		if err := s.Delete(ctx, p); err != nil {
			t.Fatalf("Delete(%q): %v", p, err)
		}
	}
	wantList(t, s, "", existingList...)
}

// testSweepKeepsDirs: a temporary object that a write's cleanup could
// not reach (a dropped connection) in an existing empty directory the
// store wrote into is swept, and the directory stays.
func testSweepKeepsDirs(t *testing.T, s storage.Store, mk MakeDir, plant PlantTemp) {
	for _, d := range existingDirs {
		mk(t, s, d)
	}
	put(t, s, "pre/x.txt", "x")
	put(t, s, "deep/er/y.txt", "y")
	for _, p := range []string{"pre/x.txt", "deep/er/y.txt"} {
		if err := s.Delete(t.Context(), p); err != nil {
			t.Fatalf("Delete(%q): %v", p, err)
		}
	}
	wantSweep(t, s, storage.SweepOptions{Dirs: []string{"pre"}}, plant(t, s, "pre"))
	wantSweep(t, s, storage.SweepOptions{}, plant(t, s, "pre"), plant(t, s, "deep/er"))
	wantList(t, s, "", existingList...)
}
