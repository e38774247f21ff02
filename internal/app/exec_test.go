package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultstore"
	"github.com/distributor-dev/distributor/internal/txn"
)

// fixture is a config with two pipelines sharing one local root, and
// helpers to write bundles.
type fixture struct {
	t    *testing.T
	dir  string
	root string
	cfg  *config.Config
}

func newFixture(t *testing.T, workflow string) *fixture {
	t.Helper()
	return yamlFixture(t, fmt.Sprintf(`pipelines:
  - {id: mine, source: mine, destinations: [site]}
  - {id: theirs, source: theirs, destinations: [site-theirs]}
destinations:
  - {id: site, backend: local, path: www, workflow: %s}
  - {id: site-theirs, backend: local, path: www}
`, workflow))
}

// yamlFixture is a fixture in a fresh directory whose configuration
// (distributor.yaml) is yaml; root is its www, where local destinations
// with path www publish.
func yamlFixture(t *testing.T, yaml string) *fixture {
	t.Helper()
	dir := t.TempDir()
	return &fixture{t: t, dir: dir, root: filepath.Join(dir, "www"), cfg: writeConfig(t, dir, "distributor.yaml", yaml)}
}

// writeConfig writes yaml to the file name in dir and loads it.
func writeConfig(t *testing.T, dir, name, yaml string) *config.Config {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadEnv(path, os.Getenv)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, yaml)
	}
	return cfg
}

// bundle writes files into the named bundle directory (replacing it) and seals it.
func (f *fixture) bundle(name, id string, files map[string]string) {
	f.t.Helper()
	d := filepath.Join(f.dir, name)
	if err := os.RemoveAll(d); err != nil {
		f.t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(d, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	if _, err := bundle.Seal(context.Background(), d, id, time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) app(wrap func(storage.Store) storage.Store) *App {
	a := New("test", nil)
	a.Now = func() time.Time { return time.Date(2026, 6, 20, 8, 0, 0, 0, time.UTC) }
	if wrap != nil {
		a.Open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
			st, err := a.DefaultOpenStore(ctx, d, root)
			if err != nil {
				return nil, err
			}
			return wrap(st), nil
		}
	}
	return a
}

func (f *fixture) run(a *App, pipeline string) *report.Destination {
	f.t.Helper()
	rep, err := a.Run(context.Background(), f.cfg, RunOptions{Pipelines: []string{pipeline}})
	if err != nil {
		f.t.Fatal(err)
	}
	if p := rep.Pipelines[0]; p.Error != nil {
		f.t.Fatalf("pipeline error: %s", *p.Error)
	}
	return &rep.Pipelines[0].Destinations[0]
}

// checkInvariants asserts what spec section 6 promises after any run (see
// storeInvariants) for a local root.
func checkInvariants(t *testing.T, root string, before map[string]string, beforeCat *catalog.Catalog, unmanaged []string) *catalog.Catalog {
	t.Helper()
	st, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return storeInvariants(t, st, before, beforeCat, unmanaged)
}

// TestApplyFailureAtEveryStep fails the k-th storage write of a replacement
// run (creates, overwrites, deletes, the catalog) for every k, and checks the
// invariants after each.
func TestApplyFailureAtEveryStep(t *testing.T) {
	f := newFixture(t, "replacement")
	f.bundle("mine", "mine.one", map[string]string{"keep.txt": "keep", "change.txt": "v1", "drop.txt": "drop", "docs/a.md": "# A"})
	f.bundle("theirs", "theirs.one", map[string]string{"theirs.txt": "theirs"})
	if d := f.run(f.app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("setup run: %+v", d)
	}
	if d := f.run(f.app(nil), "theirs"); d.Status != report.StatusOK {
		t.Fatalf("setup run: %+v", d)
	}
	if err := os.WriteFile(filepath.Join(f.root, "hand.txt"), []byte("hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The next bundle creates, overwrites, keeps and drops.
	f.bundle("mine", "mine.two", map[string]string{"keep.txt": "keep", "change.txt": "v2", "new/one.txt": "1", "new/two.txt": "2", "docs/a.md": "# A2"})
	pristine := storagetest.DirSnapshot(t, f.root)
	st, _ := local.New(f.root)
	r0, _ := ReadRoot(context.Background(), st)
	st.Close()
	beforeCat := r0.State.Catalog

	// Count the writes of a clean run on a copy.
	counter := &faultstore.Store{Ignore: faultstore.IgnoreLock}
	clean := f.app(func(s storage.Store) storage.Store { counter.Store = s; return counter })
	d := f.run(clean, "mine")
	if d.Status != report.StatusOK || d.Action != "replace_catalog" {
		t.Fatalf("clean run: %s %s %v", d.Status, d.Action, d.Error)
	}
	total := counter.Calls()
	if total < 6 {
		t.Fatalf("expected at least 6 writes, got %d: %v", total, counter.Log())
	}
	checkInvariants(t, f.root, pristine, beforeCat, []string{"hand.txt"})

	for k := 1; k <= total; k++ {
		for _, crash := range []bool{false, true} {
			name := fmt.Sprintf("fail_write_%d", k)
			if crash {
				name = fmt.Sprintf("crash_at_write_%d", k)
			}
			t.Run(name, func(t *testing.T) {
				restore(t, f.root, pristine)
				// crash: this write and every later one fail, as if the
				// process died there; nothing can be cleaned up.
				fs := &faultstore.Store{FailAt: k, Sticky: crash, Ignore: faultstore.IgnoreLock}
				a := f.app(func(s storage.Store) storage.Store { fs.Store = s; return fs })
				d := f.run(a, "mine")
				failedOp := fs.Log()[k-1]
				switch {
				case failedOp == "delete "+journal.Name:
					// The catalog was committed; only the journal is left over.
					if d.Status != report.StatusOK {
						t.Fatalf("run failed although its catalog was written: %v", d.Error)
					}
				case d.Status != report.StatusFailed:
					t.Fatalf("run with write %d failing (%s) succeeded", k, failedOp)
				case d.Error == nil || !strings.Contains(*d.Error, "injected failure"):
					t.Errorf("error does not carry the cause: %v", d.Error)
				}
				if !crash && failedOp != "delete "+journal.Name {
					checkInvariants(t, f.root, pristine, beforeCat, []string{"hand.txt"})
				}
				// Recovery (what the next writer does first) restores the
				// invariants whatever the attempt left. A crashed run's lock
				// stays, with its intent: the next writer takes it over,
				// moving the intent to the journal first.
				st, _ := local.New(f.root)
				takeOverDeadRun(t, st)
				if _, err := txn.Recover(context.Background(), st, nil, time.Now()); err != nil {
					t.Fatalf("recover: %v", err)
				}
				st.Close()
				checkInvariants(t, f.root, pristine, beforeCat, []string{"hand.txt"})
				// The next clean run converges to the result of a clean run.
				d = f.run(f.app(nil), "mine")
				if d.Status != report.StatusOK {
					t.Fatalf("recovery run: %s %v", d.Status, d.Error)
				}
				c := checkInvariants(t, f.root, pristine, beforeCat, []string{"hand.txt"})
				got := paths(c)
				want := []string{"change.txt", "docs/a.html", "keep.txt", "new/one.txt", "new/two.txt", "theirs.txt"}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("after recovery run: %v, want %v", got, want)
				}
			})
		}
	}
}

// TestSourceChangedDuringCopy: bytes that no longer match the manifest are
// never published, and nothing the attempt created is left behind. The
// mismatch is found while the writes are staged, before anything became
// visible, so the pipeline reports its bundle invalid, once: the
// destination it stopped is not listed as failed as well.
func TestSourceChangedDuringCopy(t *testing.T) {
	f := newFixture(t, "additive")
	f.bundle("mine", "mine.one", map[string]string{"a.txt": "aaaa", "b.txt": "bbbb"})
	// Tamper after validation: the wrapper swaps b.txt's bytes when the
	// first write happens.
	var tamper sync.Once
	a := f.app(func(s storage.Store) storage.Store {
		return &hookStore{Store: s, beforePut: func(path string) {
			tamper.Do(func() {
				os.WriteFile(filepath.Join(f.dir, "mine", "b.txt"), []byte("BBBB"), 0o644)
			})
		}}
	})
	rep, err := a.Run(context.Background(), f.cfg, RunOptions{Pipelines: []string{"mine"}})
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Pipelines[0]
	if p.Error == nil || !strings.Contains(*p.Error, "b.txt: sha256 mismatch") {
		t.Errorf("want the pipeline to report its bundle invalid, naming b.txt, got %v", p.Error)
	}
	if len(p.Destinations) != 0 || rep.Summary.PipelinesFailed != 1 || rep.Summary.Failed != 0 {
		t.Errorf("want the pipeline failed as a whole with no destination listed, got %+v, summary %+v", p.Destinations, rep.Summary)
	}
	after := storagetest.DirSnapshot(t, f.root)
	if _, ok := after["b.txt"]; ok {
		t.Errorf("tampered bytes were published")
	}
	if _, ok := after["a.txt"]; ok {
		t.Errorf("file created by the failed attempt was left behind")
	}
}

type hookStore struct {
	storage.Store
	beforePut func(path string)
}

// Put implements storage.Store: an output write (not a conditional one)
// calls beforePut first.
func (h *hookStore) Put(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode != storage.PutIfVersion {
		h.beforePut(path)
	}
	return h.Store.Put(ctx, path, r, size, opts)
}

// Stage implements storage.Store: a staged write is a write (its bytes
// are read while it is staged).
func (h *hookStore) Stage(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	h.beforePut(path)
	return h.Store.Stage(ctx, path, r, size, opts)
}

// stagedHook is a storage.Staged that calls commit before its Commit.
type stagedHook struct {
	storage.Staged
	commit func()
}

func (s stagedHook) Commit(ctx context.Context) error {
	s.commit()
	return s.Staged.Commit(ctx)
}

func restore(t *testing.T, root string, files map[string]string) {
	t.Helper()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func paths(c *catalog.Catalog) []string {
	var out []string
	for _, o := range c.Outputs {
		out = append(out, o.Path)
	}
	sort.Strings(out)
	return out
}

// TestCancelLeavesTruthfulCatalog: Ctrl-C in the middle of the writes stops
// the run, which still removes what it created and leaves a truthful catalog.
func TestCancelLeavesTruthfulCatalog(t *testing.T) {
	f := newFixture(t, "replacement")
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("v1 %d", i)
	}
	f.bundle("mine", "mine.one", files)
	if d := f.run(f.app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("setup: %+v", d)
	}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("v2 %d", i)
		files[fmt.Sprintf("new%02d.txt", i)] = "new"
	}
	f.bundle("mine", "mine.two", files)
	pristine := storagetest.DirSnapshot(t, f.root)
	st, _ := local.New(f.root)
	r0, _ := ReadRoot(context.Background(), st)
	st.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var puts sync.Mutex
	n := 0
	a := f.app(func(s storage.Store) storage.Store {
		return &hookStore{Store: s, beforePut: func(path string) {
			puts.Lock()
			defer puts.Unlock()
			if n++; n == 10 {
				cancel() // the operator presses Ctrl-C
			}
		}}
	})
	rep, err := a.Run(ctx, f.cfg, RunOptions{Pipelines: []string{"mine"}})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Pipelines[0].Destinations[0]
	if d.Status != report.StatusFailed || d.Error == nil || !strings.Contains(*d.Error, "context canceled") {
		t.Fatalf("want a run stopped by cancellation, got %s %v", d.Status, d.Error)
	}
	// The catalog is truthful as the run left it; the journal stays (a
	// cancelled remote request may still land) and the next writer's
	// recovery finds nothing more to do here.
	st2, _ := local.New(f.root)
	r1, _ := ReadRoot(context.Background(), st2)
	if audit, err := Audit(context.Background(), st2, r1.State.Catalog, nil); err != nil || !audit.Truthful() {
		t.Errorf("catalog not truthful after the cancelled run: %+v %v", audit, err)
	}
	if _, err := txn.Recover(context.Background(), st2, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	st2.Close()
	checkInvariants(t, f.root, pristine, r0.State.Catalog, nil)
	after := storagetest.DirSnapshot(t, f.root)
	for p := range after {
		if strings.HasPrefix(p, "new") {
			t.Errorf("%s created by the cancelled run was left behind", p)
		}
	}
}

// syncRecorder is a store that defers durability (storage.Syncer) and
// records the order of writes and syncs.
type syncRecorder struct {
	storage.Store
	mu  sync.Mutex
	ops []string
}

func (s *syncRecorder) record(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op)
}

func (s *syncRecorder) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion {
		s.record("putif " + p)
	} else {
		s.record("put " + p)
	}
	return s.Store.Put(ctx, p, r, size, opts)
}

// Stage implements storage.Store: a staged write is recorded as a put
// when it is committed (made visible).
func (s *syncRecorder) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	sg, err := s.Store.Stage(ctx, p, r, size, opts)
	if err != nil {
		return nil, err
	}
	return stagedHook{sg, func() { s.record("put " + p) }}, nil
}

// RewriteIf is the catalog's conditional write on local disk.
func (s *syncRecorder) RewriteIf(ctx context.Context, p string, v storage.Version, fn func(io.Reader, io.Writer) error) error {
	s.record("putif " + p)
	return s.Store.RewriteIf(ctx, p, v, fn)
}

func (s *syncRecorder) Sync(ctx context.Context) error {
	s.record("sync")
	return nil
}

// TestSyncBeforeCatalog: on a store that defers durability, the executor
// syncs after the last output write and before the catalog that records it.
func TestSyncBeforeCatalog(t *testing.T) {
	f := newFixture(t, "additive")
	f.bundle("mine", "mine.one", map[string]string{"a.txt": "a", "b/c.txt": "c"})
	rec := &syncRecorder{}
	d := f.run(f.app(func(s storage.Store) storage.Store { rec.Store = s; return rec }), "mine")
	if d.Status != report.StatusOK {
		t.Fatalf("run: %s %v", d.Status, d.Error)
	}
	lastPut, syncAt, catalogAt := -1, -1, -1
	for i, op := range rec.ops {
		switch {
		case strings.HasPrefix(op, "put "):
			lastPut = i
		case op == "sync":
			syncAt = i
		case op == "putif "+catalog.FileName:
			catalogAt = i
		}
	}
	if !(lastPut >= 0 && lastPut < syncAt && syncAt < catalogAt) {
		t.Errorf("want puts, then sync, then the catalog; got %v", rec.ops)
	}
}

// TestFailedDestinationCountsApplied: a destination whose final catalog
// write fails reports what it applied (the overwrites and the delete it
// recorded; its creates were rolled back), separately from its plan.
func TestFailedDestinationCountsApplied(t *testing.T) {
	f := newFixture(t, "replacement")
	f.bundle("mine", "mine.one", map[string]string{"keep.txt": "keep", "change.txt": "v1", "drop.txt": "drop"})
	if d := f.run(f.app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("setup run: %+v", d)
	}
	f.bundle("mine", "mine.two", map[string]string{"keep.txt": "keep", "change.txt": "v2", "new.txt": "new"})
	// Find the catalog write of a clean attempt, then fail exactly it.
	counter := &faultstore.Store{Ignore: faultstore.IgnoreLock}
	pristine := storagetest.DirSnapshot(t, f.root)
	if d := f.run(f.app(func(s storage.Store) storage.Store { counter.Store = s; return counter }), "mine"); d.Status != report.StatusOK {
		t.Fatalf("clean run: %+v", d)
	}
	k := 0
	for i, op := range counter.Log() {
		if op == "putif "+catalog.FileName {
			k = i + 1
		}
	}
	restore(t, f.root, pristine)
	fs := &faultstore.Store{FailAt: k, Ignore: faultstore.IgnoreLock}
	d := f.run(f.app(func(s storage.Store) storage.Store { fs.Store = s; return fs }), "mine")
	if d.Status != report.StatusFailed {
		t.Fatalf("status %s, want failed (ops %v)", d.Status, fs.Log())
	}
	want := plan.Counts{Overwritten: 1, Deleted: 1}
	if d.Counts != want {
		t.Errorf("counts %+v, want what was applied: %+v", d.Counts, want)
	}
	if d.Planned == nil || *d.Planned != (plan.Counts{Created: 1, Overwritten: 1, Unchanged: 1, Deleted: 1}) {
		t.Errorf("planned %+v", d.Planned)
	}
	if _, err := os.Stat(filepath.Join(f.root, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt: %v, want rolled back", err)
	}
}
