package txn

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/catalog/catalogtest"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

var now = time.Date(2026, 6, 20, 8, 0, 0, 0, time.UTC)

// fakeClock is a monotonic clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	d  time.Duration
}

func (c *fakeClock) Mono() time.Duration { c.mu.Lock(); defer c.mu.Unlock(); return c.d }
func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.d += d }

// hooked calls before (if set) ahead of every Put; a non-nil error fails
// the call. after runs after a successful Put that is not conditional.
type hooked struct {
	storage.Store
	before func(op, path string) error
	after  func(path string)
}

// Put implements storage.Store: before sees it as a "put", or a "putif"
// with PutIfVersion; after sees the other writes that succeeded.
func (h *hooked) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion {
		if h.before != nil {
			if err := h.before("putif", p); err != nil {
				return "", err
			}
		}
		return h.Store.Put(ctx, p, r, size, opts)
	}
	return "", h.put(p, func() error { _, err := h.Store.Put(ctx, p, r, size, opts); return err })
}

func (h *hooked) put(p string, write func() error) error {
	if h.before != nil {
		if err := h.before("put", p); err != nil {
			return err
		}
	}
	if err := write(); err != nil {
		return err
	}
	if h.after != nil {
		h.after(p)
	}
	return nil
}

// Properties hides Rewrite, so that the catalog is written with a
// conditional Put, which before sees.
func (h *hooked) Properties() storage.Properties {
	p := h.Store.Properties()
	p.Rewrite = false
	return p
}

func newRoot(t *testing.T) (string, storage.Store) {
	t.Helper()
	dir := t.TempDir()
	st, err := local.NewDeferred(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return dir, st
}

func begin(t *testing.T, st storage.Store, clock *fakeClock) *Txn {
	t.Helper()
	l := lock.Locker{Lease: time.Hour, Wait: time.Second}
	if clock != nil {
		l.Mono = clock.Mono
	}
	tx, err := Begin(context.Background(), Options{Store: st, Command: "run", Lock: l, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tx.End)
	return tx
}

func record(p, data string) catalog.Output {
	return catalog.Output{Path: p, PipelineID: "p", DestinationID: "d", Kind: catalog.KindSource,
		Source: catalog.Source{ID: "s", Digest: "sha256:" + strings.Repeat("0", 64), Created: now},
		SHA256: digest(data), Size: int64(len(data)), CreatedAt: now, UpdatedAt: now}
}

func write(p, data string) Write {
	return Write{Path: p, SHA256: digest(data), Size: int64(len(data)), Record: new(record(p, data)),
		Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(data)), nil }}
}

// change writes files (all new) and records them all in Final; Partial
// records the done ones.
func change(files map[string]string) *Change {
	ch := &Change{}
	var all []catalog.Output
	for _, p := range slices.Sorted(func(y func(string) bool) {
		for p := range files {
			if !y(p) {
				return
			}
		}
	}) {
		ch.Writes = append(ch.Writes, write(p, files[p]))
		all = append(all, record(p, files[p]))
	}
	h := catalog.Header{CreatedAt: now, UpdatedAt: now}
	ch.Final = &catalog.Edit{Fresh: true, Header: h, Put: all}
	ch.Partial = func(done []string) *catalog.Edit {
		e := &catalog.Edit{Fresh: true, Header: h}
		for _, p := range done {
			e.Put = append(e.Put, record(p, files[p]))
		}
		return e
	}
	return ch
}

func exists(t *testing.T, dir, p string) bool {
	t.Helper()
	_, err := os.Lstat(filepath.Join(dir, p))
	return err == nil
}

func TestApplyCommits(t *testing.T) {
	dir, st := newRoot(t)
	if err := os.WriteFile(filepath.Join(dir, "old.txt"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	tx := begin(t, st, nil)
	ch := change(map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	ch.Deletes = []string{"old.txt"}
	res, err := tx.Apply(ch)
	if err != nil || !res.Committed {
		t.Fatalf("apply: %v %+v", err, res)
	}
	if want := []string{"a.txt", "old.txt", "sub/b.txt"}; !slices.Equal(res.Done, want) {
		t.Errorf("done %v, want %v", res.Done, want)
	}
	if exists(t, dir, "old.txt") || exists(t, dir, journal.Name) || !exists(t, dir, "sub/b.txt") {
		t.Errorf("root after commit: old.txt %v, journal %v, sub/b.txt %v",
			exists(t, dir, "old.txt"), exists(t, dir, journal.Name), exists(t, dir, "sub/b.txt"))
	}
	state, _, _ := ReadCatalog(context.Background(), st)
	if state.Status != catalog.StatusCatalog || len(state.Catalog.Outputs) != 2 {
		t.Errorf("catalog: %v %v", state.Status, state.Problem)
	}
}

// TestSettleRemovesOnlyWhatItWrote: after a failure the cleanup removes a
// file this transaction created, but not one whose bytes someone else
// replaced meanwhile (it reports it), and the catalog records neither.
func TestSettleRemovesOnlyWhatItWrote(t *testing.T) {
	dir, base := newRoot(t)
	st := &hooked{Store: base}
	st.after = func(p string) {
		if p == "b.txt" { // someone else replaces b.txt right after this run wrote it
			if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("theirs"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	st.before = func(op, p string) error {
		if p == "c.txt" {
			return errors.New("injected: disk full")
		}
		return nil
	}
	tx := begin(t, st, nil)
	res, err := tx.Apply(change(map[string]string{"a.txt": "a", "b.txt": "b", "c.txt": "c"}))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("apply: %v", err)
	}
	if !slices.Equal(res.RolledBack, []string{"a.txt"}) {
		t.Errorf("rolled back %v, want [a.txt]", res.RolledBack)
	}
	if len(res.Left) != 1 || res.Left[0].Path != "b.txt" {
		t.Errorf("left %+v, want b.txt", res.Left)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(data) != "theirs" {
		t.Errorf("b.txt = %q: the cleanup touched bytes this run did not write", data)
	}
	if exists(t, dir, "a.txt") || exists(t, dir, journal.Name) || exists(t, dir, catalog.FileName) || res.JournalKept {
		t.Errorf("after settle: a.txt %v, journal %v (kept %v), catalog %v",
			exists(t, dir, "a.txt"), exists(t, dir, journal.Name), res.JournalKept, exists(t, dir, catalog.FileName))
	}
	if !strings.Contains(err.Error(), "left 1 in place (b.txt") {
		t.Errorf("error does not report what was left: %v", err)
	}
}

// TestFencedSettleChangesNothing: a transaction whose lease lapsed mid-run
// (a pause, a partition) stops: no rollback, no catalog write, no journal
// removal, and it does not claim to know what the root keeps.
func TestFencedSettleChangesNothing(t *testing.T) {
	dir, base := newRoot(t)
	clock := &fakeClock{}
	st := &hooked{Store: base}
	st.before = func(op, p string) error {
		if p == "b.txt" {
			clock.Add(2 * time.Hour) // paused past the lease before this write
		}
		return nil
	}
	tx := begin(t, st, clock)
	res, err := tx.Apply(change(map[string]string{"a.txt": "a", "b.txt": "b"}))
	if err == nil {
		t.Fatal("apply succeeded after the lease lapsed")
	}
	if !errors.Is(err, lock.ErrLeaseLapsed) {
		t.Errorf("error %v, want one matching lock.ErrLeaseLapsed", err)
	}
	if strings.Contains(err.Error(), "keeps its intent journal") || !strings.Contains(err.Error(), "next holder") {
		t.Errorf("error should hand the root to the lock's next holder: %v", err)
	}
	if exists(t, dir, "b.txt") {
		t.Error("a write landed after the lease lapsed")
	}
	if !exists(t, dir, "a.txt") || !exists(t, dir, journal.Name) || exists(t, dir, catalog.FileName) {
		t.Errorf("a fenced writer changed the root: a.txt %v, journal %v, catalog %v",
			exists(t, dir, "a.txt"), exists(t, dir, journal.Name), exists(t, dir, catalog.FileName))
	}
	if len(res.RolledBack) != 0 {
		t.Errorf("rolled back %v", res.RolledBack)
	}
}

// TestLostCatalogAnswer: a catalog write that landed but whose answer was
// lost is recognised as committed by the cleanup.
func TestLostCatalogAnswer(t *testing.T) {
	dir, base := newRoot(t)
	st := &hooked{Store: base}
	st.before = func(op, p string) error {
		if op == "putif" && p == catalog.FileName {
			st.before = nil
			if _, err := storage.PutIf(context.Background(), base, p, mustEncode(t, finalOf(t)), ""); err != nil {
				t.Error(err)
			}
			return errors.New("injected: connection reset after the request was sent")
		}
		return nil
	}
	tx := begin(t, st, nil)
	res, err := tx.Apply(change(map[string]string{"a.txt": "a"}))
	if err != nil || !res.Committed {
		t.Fatalf("apply: %v %+v", err, res)
	}
	if !exists(t, dir, "a.txt") || exists(t, dir, journal.Name) {
		t.Errorf("a.txt %v, journal %v", exists(t, dir, "a.txt"), exists(t, dir, journal.Name))
	}
}

func finalOf(t *testing.T) *catalog.Catalog {
	c, err := catalogtest.Apply(nil, change(map[string]string{"a.txt": "a"}).Final)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustEncode(t *testing.T, c *catalog.Catalog) []byte {
	data, err := catalog.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestBeginSweepsTempFiles: a writer removes the temporary files of
// interrupted lock, claim, journal or catalog writes in the root directory
// every time, and those below it after recovering a dead run's journal.
func TestBeginSweepsTempFiles(t *testing.T) {
	plant := func(t *testing.T, dir string) {
		for _, p := range []string{storage.TempPrefix + "lock", "sub/" + storage.TempPrefix + "out"} {
			full := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "sub/keep.txt"), []byte("k"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("no journal", func(t *testing.T) {
		dir, st := newRoot(t)
		plant(t, dir)
		tx := begin(t, st, nil)
		if !slices.Equal(tx.Swept, []string{storage.TempPrefix + "lock"}) {
			t.Errorf("swept %v", tx.Swept)
		}
		if !exists(t, dir, "sub/"+storage.TempPrefix+"out") {
			t.Error("swept below the root without a journal to recover")
		}
	})
	t.Run("after recovery", func(t *testing.T) {
		dir, st := newRoot(t)
		plant(t, dir)
		j, _ := journal.Encode(&journal.Journal{RunID: "dead", Command: "run", Started: now})
		if err := os.WriteFile(filepath.Join(dir, journal.Name), j, 0o644); err != nil {
			t.Fatal(err)
		}
		tx := begin(t, st, nil)
		// Two temporary files of one byte each ("x").
		if tx.Recovery == nil || len(tx.Swept) != 2 || tx.Recovery.TempSwept != 2 || tx.Recovery.TempBytes != 2 || tx.SweptBytes != 2 {
			t.Errorf("recovery %+v, swept %v (%d B)", tx.Recovery, tx.Swept, tx.SweptBytes)
		}
		if !exists(t, dir, "sub/keep.txt") {
			t.Error("the sweep removed a file that is not temporary")
		}
	})
}

// TestCreateNeverReplaces: a path that did not exist when the change was
// planned is only created: if something appeared there since (a successor's
// file, written while this writer was paused), the write fails and the
// cleanup leaves that file alone.
func TestCreateNeverReplaces(t *testing.T) {
	dir, base := newRoot(t)
	st := &hooked{Store: base}
	st.before = func(op, p string) error {
		if p == "b.txt" {
			if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("successor"), 0o644); err != nil {
				t.Error(err)
			}
		}
		return nil
	}
	tx := begin(t, st, nil)
	_, err := tx.Apply(change(map[string]string{"a.txt": "a", "b.txt": "b"}))
	if !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("apply: %v, want a precondition failure for b.txt", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(data) != "successor" {
		t.Errorf("b.txt = %q: a create replaced a file that appeared after planning", data)
	}
	if exists(t, dir, "a.txt") {
		t.Error("a.txt, created by the failed change, was left behind")
	}
}

// TestSettleStopsWhenCatalogChanged: if the catalog changed under a failed
// transaction (another writer committed: the lock did not hold), the
// cleanup cannot tell whose files are whose, so it removes nothing and
// keeps its journal for the next holder.
func TestSettleStopsWhenCatalogChanged(t *testing.T) {
	dir, base := newRoot(t)
	st := &hooked{Store: base}
	st.before = func(op, p string) error {
		if p == "b.txt" {
			other := mustEncode(t, &catalog.Catalog{SchemaVersion: 4, CreatedAt: now, UpdatedAt: now,
				Outputs: []catalog.Output{record("a.txt", "a")}})
			if err := os.WriteFile(filepath.Join(dir, catalog.FileName), other, 0o644); err != nil {
				t.Error(err)
			}
			return errors.New("injected: connection reset")
		}
		return nil
	}
	tx := begin(t, st, nil)
	res, err := tx.Apply(change(map[string]string{"a.txt": "a", "b.txt": "b"}))
	if err == nil || !strings.Contains(err.Error(), "changed since this run read it") {
		t.Fatalf("apply: %v", err)
	}
	if !res.JournalKept || len(res.RolledBack) != 0 {
		t.Errorf("result %+v: want the journal kept and nothing rolled back", res)
	}
	if !exists(t, dir, "a.txt") || !exists(t, dir, journal.Name) {
		t.Errorf("a.txt %v, journal %v: the cleanup touched a root whose catalog another writer changed",
			exists(t, dir, "a.txt"), exists(t, dir, journal.Name))
	}
}

// orderStore records the start and end of every write and delete, and
// every conditional write, in the order they happen.
type orderStore struct {
	storage.Store
	mu     sync.Mutex
	events []string
}

func (o *orderStore) log(e string) { o.mu.Lock(); o.events = append(o.events, e); o.mu.Unlock() }

// Put implements storage.Store: it logs the start and end of a write, or
// "putif path" for a conditional one.
func (o *orderStore) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion {
		o.log("putif " + p)
		return o.Store.Put(ctx, p, r, size, opts)
	}
	o.log("start " + p)
	defer o.log("end " + p)
	time.Sleep(time.Millisecond) // let parallel writes overlap
	return o.Store.Put(ctx, p, r, size, opts)
}

func (o *orderStore) Delete(ctx context.Context, p string) error {
	o.log("delete " + p)
	return o.Store.Delete(ctx, p)
}

// RewriteIf is the catalog's conditional write on local disk.
func (o *orderStore) RewriteIf(ctx context.Context, p string, v storage.Version, fn func(io.Reader, io.Writer) error) error {
	o.log("putif " + p)
	return o.Store.RewriteIf(ctx, p, v, fn)
}

// TestApplyWritesPhaseByPhase: with parallel workers, every write of a
// phase ends before the first write of the next phase starts; deletes come
// after every write and the catalog after every delete.
func TestApplyWritesPhaseByPhase(t *testing.T) {
	dir, base := newRoot(t)
	for _, p := range []string{"old1.txt", "old2.txt"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := &orderStore{Store: base}
	tx, err := Begin(context.Background(), Options{Store: st, Command: "run", Jobs: 4,
		Lock: lock.Locker{Lease: time.Hour, Wait: time.Second}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.End()
	phase := map[string]int{"a.css": 0, "b.png": 0, "c.svg": 0, "d.csv": 0, "e.html": 1, "f/g.html": 1, "h.html": 1, "index.html": 2}
	files := map[string]string{}
	for p := range phase {
		files[p] = p
	}
	ch := change(files)
	for i := range ch.Writes {
		ch.Writes[i].Phase = phase[ch.Writes[i].Path]
	}
	// Put the primary page first in the list: the phase, not the list
	// order, decides.
	slices.SortStableFunc(ch.Writes, func(a, b Write) int { return b.Phase - a.Phase })
	ch.Deletes = []string{"old1.txt", "old2.txt"}
	st.mu.Lock()
	st.events = nil // forget Begin's probe, lock and sweep
	st.mu.Unlock()
	if _, err := tx.Apply(ch); err != nil {
		t.Fatal(err)
	}
	// For each event, the highest phase started so far and the lowest
	// phase still running must never invert.
	started := map[int]int{}
	ended := map[int]int{}
	total := map[int]int{}
	for _, ph := range phase {
		total[ph]++
	}
	writesDone, deletesDone, catalogAt := 0, 0, -1
	for i, e := range st.events {
		op, p, _ := strings.Cut(e, " ")
		switch op {
		case "start":
			ph := phase[p]
			for lower := 0; lower < ph; lower++ {
				if ended[lower] != total[lower] {
					t.Errorf("event %d: %s (phase %d) started while phase %d had %d of %d writes finished\n%s",
						i, p, ph, lower, ended[lower], total[lower], strings.Join(st.events, "\n"))
				}
			}
			started[ph]++
		case "end":
			ended[phase[p]]++
			writesDone++
		case "delete":
			if writesDone != len(phase) {
				t.Errorf("delete of %s before every write ended (%d of %d)", p, writesDone, len(phase))
			}
			deletesDone++
		case "putif":
			if p == catalog.FileName {
				catalogAt = i
				if deletesDone != 2 {
					t.Errorf("catalog written after %d of 2 deletes", deletesDone)
				}
			}
		}
	}
	if catalogAt < 0 || writesDone != len(phase) {
		t.Fatalf("catalog at %d, %d writes: %v", catalogAt, writesDone, st.events)
	}
}
