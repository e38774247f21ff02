package txn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
)

// lateStore holds back the Put of one path: it answers context.Canceled
// without writing, as a PUT whose body went out whole but whose answer a
// signal cut short, and keeps the bytes for land, which writes them later,
// as the server applying that PUT after the run settled.
type lateStore struct {
	storage.Store
	path string
	mu   sync.Mutex
	held []byte
}

func (s *lateStore) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if p != s.path {
		return s.Store.Put(ctx, p, r, size, opts)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.held = data
	s.mu.Unlock()
	return "", fmt.Errorf("put %s: %w", p, context.Canceled)
}

// Properties implements storage.Store: the store is remote, as only a
// remote one can apply a request after its call returned.
func (s *lateStore) Properties() storage.Properties {
	p := s.Store.Properties()
	p.Remote = true
	return p
}

func (s *lateStore) land(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		t.Fatalf("no put of %s was held", s.path)
	}
	if _, err := s.Store.Put(context.Background(), s.path, strings.NewReader(string(s.held)), int64(len(s.held)), storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// replaceChange replaces the recorded files with new bytes: Final records
// them all, Partial the done ones, both as edits of the catalog at base.
func replaceChange(base storage.Version, old, files map[string]string) *Change {
	ch := &Change{Base: base}
	h := catalog.Header{CreatedAt: now, UpdatedAt: now}
	ch.Final = &catalog.Edit{Header: h}
	for _, p := range sortedKeys(files) {
		w := write(p, files[p])
		w.Existed = true
		w.Previous = &Digest{SHA256: digest(old[p]), Size: int64(len(old[p]))}
		ch.Writes = append(ch.Writes, w)
		ch.Final.Put = append(ch.Final.Put, record(p, files[p]))
	}
	ch.Partial = func(done []string) *catalog.Edit {
		e := &catalog.Edit{Header: h}
		for _, p := range done {
			e.Put = append(e.Put, record(p, files[p]))
		}
		return e
	}
	return ch
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestLateReplaceAfterPartialCommit is the ordering behind a recorded
// object holding other bytes than its record after SIGTERM (docs/design.md,
// "Requests cut short"): a replace whose answer a signal cut short, a
// settle that finds the old bytes and records the partial result while
// keeping the journal, the replace landing after that, and the next
// writer's recovery, which must not take the changed catalog for the dead
// run's final commit without looking at the journaled writes.
func TestLateReplaceAfterPartialCommit(t *testing.T) {
	ctx := context.Background()
	_, base := newRoot(t)
	old := map[string]string{"a.txt": "A1", "b.txt": "B1"}
	tx := begin(t, base, nil)
	if _, err := tx.Apply(change(old)); err != nil {
		t.Fatal(err)
	}
	tx.End()
	_, ver, err := ReadCatalog(ctx, base)
	if err != nil {
		t.Fatal(err)
	}

	st := &lateStore{Store: base, path: "b.txt"}
	tx = begin(t, st, nil)
	res, err := tx.Apply(replaceChange(ver, old, map[string]string{"a.txt": "A2", "b.txt": "B2"}))
	if err == nil || !res.JournalKept || !strings.Contains(err.Error(), "requests cut short may still land") {
		t.Fatalf("apply: %v (journal kept %v), want a settle that keeps the journal", err, res.JournalKept)
	}
	tx.End()
	st.land(t) // the cut-short replace lands after the partial commit

	tx = begin(t, base, nil)
	tx.End()
	if tx.Recovery == nil {
		t.Fatal("the next writer recovered nothing")
	}
	state, _, err := ReadCatalog(ctx, base)
	if err != nil || state.Status != catalog.StatusCatalog {
		t.Fatalf("catalog: %v %v", state.Status, err)
	}
	for _, o := range state.Catalog.Outputs {
		sum, size, err := HashObject(ctx, base, o.Path)
		if err != nil || sum != o.SHA256 || size != o.Size {
			t.Errorf("record of %s names %s (%d B), the object holds %s (%d B, %v)", o.Path, o.SHA256, o.Size, sum, size, err)
		}
	}
	if _, err := base.Stat(ctx, journal.Name); err == nil {
		t.Error("the journal outlived the recovery")
	}
	if got := tx.Recovery.RolledForward; !slices.Equal(got, []string{"b.txt"}) {
		t.Errorf("rolled forward %v, want [b.txt]", got)
	}
}

// TestRecoveryNamesWhyItStopped: a recovery cut short by its context says
// why the context ended (a lapsed lease, a signal), not only "context
// canceled".
func TestRecoveryNamesWhyItStopped(t *testing.T) {
	_, st := newRoot(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("the lease lapsed"))
	_, err := Recover(ctx, st, nil, now)
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the lease lapsed") {
		t.Errorf("recover under a cancelled context: %v; want context canceled naming its cause", err)
	}
}

// opens counts the Opens (hashes) of each path.
type opens struct {
	storage.Store
	mu sync.Mutex
	n  map[string]int
}

func (o *opens) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	o.mu.Lock()
	o.n[p]++
	o.mu.Unlock()
	return o.Store.Open(ctx, p)
}

// TestSignalSettlesOnlyWhatWentOut: a signal in the middle of the writes
// leaves the writes that never went out unchecked (nothing of them landed:
// hashing them is what made an interrupted run's cleanup run out of time),
// and on local disk, where a call's effect is known when it returns, the
// settled root keeps no journal for requests that might still land.
func TestSignalSettlesOnlyWhatWentOut(t *testing.T) {
	_, base := newRoot(t)
	cnt := &opens{Store: base, n: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &hooked{Store: cnt, before: func(op, p string) error {
		if p == "c.txt" {
			cancel() // the signal, as c.txt goes out
		}
		return nil
	}}
	tx, err := Begin(ctx, Options{Store: st, Command: "run", Lock: lock.Locker{Lease: time.Hour, Wait: time.Second},
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.End()
	files := map[string]string{}
	for _, p := range []string{"a.txt", "b.txt", "c.txt", "d.txt", "e.txt"} {
		files[p] = p + " bytes"
	}
	res, err := tx.Apply(change(files))
	if err == nil || res.JournalKept || strings.Contains(err.Error(), "may still land") {
		t.Fatalf("apply: %v (journal kept %v); want a settled root without a journal", err, res.JournalKept)
	}
	for _, p := range []string{"d.txt", "e.txt"} {
		if cnt.n[p] > 0 {
			t.Errorf("%s, never written, was read %d time(s) by the cleanup", p, cnt.n[p])
		}
	}
}
