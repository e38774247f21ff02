package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/testutil/faultstore"
)

// TestKilledRunRecoveredFromItsLockRecord: a run killed after its output
// create, before its catalog commit, leaves its intent in its lock record
// (no journal object): the next run recovers it, after taking the silent
// lock over or after `distributor unlock --force`, and publishes.
func TestKilledRunRecoveredFromItsLockRecord(t *testing.T) {
	for _, how := range []string{"takeover", "unlock --force"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t, "additive")
			dying := killedWithIntent(t, f)
			next := f.app(nil)
			next.LockTimeout = 20 * time.Second
			next.LockLease, next.LockSkewAllowance = dying.LockLease, dying.LockSkewAllowance
			if how == "unlock --force" {
				rep, err := next.Unlock(context.Background(), f.cfg, UnlockOptions{Root: Root{Pipeline: "mine", Destination: "site"}, Force: true})
				if err != nil || !rep.Removed {
					t.Fatalf("unlock --force: %+v %v", rep, err)
				}
				if _, err := os.Stat(filepath.Join(f.root, journal.Name)); err != nil {
					t.Fatalf("unlock did not move the intent to the journal: %v", err)
				}
			}
			d := f.run(next, "mine")
			if d.Status != report.StatusOK || d.Recovered == nil || d.Recovered.Removed != 1 {
				t.Fatalf("next run: %s %v, recovered %+v; want ok after removing the dead run's new.txt", d.Status, str(d.Error), d.Recovered)
			}
			c := checkInvariants(t, f.root, nil, &catalog.Catalog{}, nil)
			if len(c.Outputs) != 2 {
				t.Errorf("catalog records %d outputs, want 2", len(c.Outputs))
			}
			for _, name := range []string{journal.Name, lock.Name} {
				if _, err := os.Stat(filepath.Join(f.root, name)); err == nil {
					t.Errorf("%s after the next run", name)
				}
			}
		})
	}
}

// intentPending says whether the root st holds a run's intent journal: the
// journal object, or a lock record with an intent.
func intentPending(t *testing.T, st storage.Store) bool {
	t.Helper()
	pending, err := journalPresent(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return pending
}

// lockWrites records whether any lock record written through it carried an
// intent.
type lockWrites struct {
	storage.Store
	withIntent, all int
}

func (w *lockWrites) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if p != lock.Name {
		return w.Store.Put(ctx, p, r, size, opts)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	var rec struct {
		Intent json.RawMessage `json:"intent"`
	}
	if json.Unmarshal(data, &rec) == nil {
		w.all++
		if len(rec.Intent) > 0 {
			w.withIntent++
		}
	}
	return w.Store.Put(ctx, p, bytes.NewReader(data), size, opts)
}

// TestRefusedPlanNeverInTheLockRecord: a run whose plan is refused still
// takes the lock when a dead run's journal is pending (to recover it), but
// its refused plan is no intent: recovered after a kill, its writes over
// the unmanaged file it refused would be rolled forward as this pipeline's.
func TestRefusedPlanNeverInTheLockRecord(t *testing.T) {
	f := newFixture(t, "additive")
	f.bundle("mine", "mine.one", map[string]string{"a.txt": "a"})
	if d := f.run(f.app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("setup run: %+v", d)
	}
	// A pending journal at the root, as a dead run leaves it.
	jr, err := journal.Encode(&journal.Journal{RunID: "dead", Command: "run", Started: time.Unix(0, 0).UTC(),
		Ops: []journal.Op{{Op: journal.OpDelete, Path: "gone.txt"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.root, journal.Name), jr, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.root, "theirs.txt"), []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.bundle("mine", "mine.two", map[string]string{"a.txt": "a", "theirs.txt": "theirs"})
	w := &lockWrites{}
	d := f.run(f.app(func(s storage.Store) storage.Store { w.Store = s; return w }), "mine")
	if d.Status == report.StatusOK || d.Action != "fail_unmanaged" {
		t.Fatalf("run over an unmanaged file: %s %s %v; want refused with fail_unmanaged", d.Status, d.Action, str(d.Error))
	}
	if w.all == 0 || w.withIntent > 0 {
		t.Errorf("lock records written: %d, %d of them with an intent; want the lock taken, with no intent", w.all, w.withIntent)
	}
	if _, err := os.Stat(filepath.Join(f.root, journal.Name)); err == nil {
		t.Errorf("the pending journal is still there: the run did not recover it")
	}
}

// killedWithIntent publishes a.txt, then runs a second publish that dies
// after its output create, before its catalog: it leaves its lock record
// with the intent and no journal object. It returns the dying App (its
// short lease).
func killedWithIntent(t *testing.T, f *fixture) *App {
	t.Helper()
	f.bundle("mine", "mine.one", map[string]string{"a.txt": "a"})
	if d := f.run(f.app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("setup run: %+v", d)
	}
	f.bundle("mine", "mine.two", map[string]string{"a.txt": "a", "new.txt": "new"})
	// The output's create is the run's first write, the catalog its
	// second: from there on every write fails, as if it died.
	fs := &faultstore.Store{FailAt: 2, Sticky: true, Ignore: faultstore.IgnoreLock}
	dying := f.app(func(s storage.Store) storage.Store { fs.Store = s; return fs })
	dying.LockLease, dying.LockSkewAllowance = 400*time.Millisecond, 100*time.Millisecond
	if d := f.run(dying, "mine"); d.Status != report.StatusFailed {
		t.Fatalf("killed run: %s %v", d.Status, d.Error)
	}
	if got := fs.Log(); len(got) < 2 || got[0] != "put new.txt" || got[1] != "putif .distributor.json" {
		t.Fatalf("writes %q: want the output, then the catalog", got)
	}
	if _, err := os.Stat(filepath.Join(f.root, "new.txt")); err != nil {
		t.Fatalf("the killed run's output: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, journal.Name)); err == nil {
		t.Fatalf("a journal object after the kill: the intent belongs in the lock record")
	}
	data, err := os.ReadFile(filepath.Join(f.root, lock.Name))
	if err != nil {
		t.Fatalf("the killed run's lock record: %v", err)
	}
	st, err := local.New(f.root)
	if err != nil {
		t.Fatal(err)
	}
	info, _, err := lock.Read(context.Background(), st)
	st.Close()
	if err != nil || len(info.Intent) == 0 {
		t.Fatalf("lock record %q (%v): want one with the intent", data, err)
	}
	return dying
}

// handover is a store on which a waiter takes the lock over right after
// the dead holder's intent moved to the journal: the record is then the
// successor's.
type handover struct {
	storage.Store
	root string
}

func (h *handover) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	v, err := h.Store.Put(ctx, p, r, size, opts)
	if err == nil && p == journal.Name {
		rec := lock.Info{ID: "successor", Host: "elsewhere", PID: 1, Command: "run", Acquired: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
		data, _ := json.Marshal(rec)
		if werr := os.WriteFile(filepath.Join(h.root, lock.Name), data, 0o644); werr != nil {
			return v, werr
		}
	}
	return v, err
}

// TestUnlockLeavesARecordThatChangedHands: `distributor unlock --force`
// moves the dead holder's intent to the journal, then finds the record is
// a successor's (a waiter took over meanwhile): it must not remove it, or
// the successor's own intent would be lost.
func TestUnlockLeavesARecordThatChangedHands(t *testing.T) {
	f := newFixture(t, "additive")
	killedWithIntent(t, f)
	a := f.app(func(s storage.Store) storage.Store { return &handover{Store: s, root: f.root} })
	rep, err := a.Unlock(context.Background(), f.cfg, UnlockOptions{Root: Root{Pipeline: "mine", Destination: "site"}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed || rep.Error == nil || !strings.Contains(*rep.Error, "changed hands") {
		t.Errorf("unlock: removed %v, error %+v; want the record left, saying it changed hands", rep.Removed, str(rep.Error))
	}
	st, err := local.New(f.root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if info, _, err := lock.Read(context.Background(), st); err != nil || info.ID != "successor" {
		t.Errorf("lock record after unlock: %+v (%v); want the successor's", info, err)
	}
}

// moving is a store on which the dead holder's intent moves from its
// record to the journal (created, then the record deleted) right after the
// first read of either.
type moving struct {
	storage.Store
	root  string
	moved bool
}

func (m *moving) move() {
	if m.moved {
		return
	}
	m.moved = true
	info, _, err := lock.Read(context.Background(), m.Store)
	if err == nil && os.WriteFile(filepath.Join(m.root, journal.Name), info.Intent, 0o644) == nil {
		os.Remove(filepath.Join(m.root, lock.Name))
	}
}

func (m *moving) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	data, v, err := m.Store.Get(ctx, p)
	m.move()
	return data, v, err
}

func (m *moving) Stat(ctx context.Context, p string) (storage.Info, error) {
	info, err := m.Store.Stat(ctx, p)
	m.move()
	return info, err
}

// TestPendingSeesAnIntentInTransit: whichever read comes first, an intent
// moving from the lock record to the journal between a reader's two reads
// is seen: the record is read before the journal.
func TestPendingSeesAnIntentInTransit(t *testing.T) {
	f := newFixture(t, "additive")
	killedWithIntent(t, f)
	st, err := local.New(f.root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := &moving{Store: st, root: f.root}
	pending, err := journalPresent(context.Background(), m)
	if err != nil || !pending || !m.moved {
		t.Errorf("pending %v (%v), moved %v; want the intent seen", pending, err, m.moved)
	}
}
