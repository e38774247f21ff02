package txn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
)

// dying is a store whose process "dies" right before it writes the
// catalog: that call and every later one fail, so nothing (no cleanup, no
// release) reaches the root any more.
type dying struct {
	storage.Store
	dead atomic.Bool
}

var errKilled = errors.New("killed")

func (d *dying) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if p == catalog.FileName {
		d.dead.Store(true)
	}
	if d.dead.Load() {
		return "", errKilled
	}
	return d.Store.Put(ctx, p, r, size, opts)
}

func (d *dying) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	if d.dead.Load() {
		return nil, "", errKilled
	}
	return d.Store.Get(ctx, p)
}

func (d *dying) Delete(ctx context.Context, p string) error {
	if d.dead.Load() {
		return errKilled
	}
	return d.Store.Delete(ctx, p)
}

// Properties hides Rewrite: the catalog is written with a Put.
func (d *dying) Properties() storage.Properties {
	p := d.Store.Properties()
	p.Rewrite = false
	return p
}

// beginAs begins a transaction as the process host/pid (a pid that is not
// alive: the holder is a dead process on this host once it stops).
func beginAs(t *testing.T, st storage.Store, pid int, intent *Change) (*Txn, error) {
	t.Helper()
	l := lock.Locker{Lease: time.Hour, Wait: 5 * time.Second, Host: "me", PID: pid,
		Alive: func(p int) bool { return p < 1000 }}
	return Begin(context.Background(), Options{Store: st, Command: "run", Lock: l, Now: func() time.Time { return now }, Intent: intent})
}

// TestIntentTravelsInTheLockRecord: a change given to Begin is journaled in
// the lock record, and Apply writes no journal object; the record goes
// with the release.
func TestIntentTravelsInTheLockRecord(t *testing.T) {
	dir, st := newRoot(t)
	ch := change(map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	var seen []string
	h := &hooked{Store: st, before: func(op, p string) error {
		seen = append(seen, op+" "+p)
		if p == catalog.FileName {
			info, _, err := lock.Read(context.Background(), st)
			j, jerr := journal.Decode(info.Intent)
			if err != nil || jerr != nil || len(j.Ops) != 2 || exists(t, dir, journal.Name) {
				t.Errorf("before the catalog: lock record %v (%v, intent %v), journal object %v; want the intent in the record only",
					info, err, jerr, exists(t, dir, journal.Name))
			}
		}
		return nil
	}}
	tx, err := beginAs(t, h, 1, ch)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := tx.Apply(ch); err != nil || !res.Committed {
		t.Fatalf("apply: %v %+v", err, res)
	}
	tx.End()
	if slices.ContainsFunc(seen, func(s string) bool { return strings.HasSuffix(s, journal.Name) }) {
		t.Errorf("the journal object was written: %q", seen)
	}
	if exists(t, dir, journal.Name) || exists(t, dir, lock.Name) {
		t.Errorf("after the run: journal %v, lock %v; want neither", exists(t, dir, journal.Name), exists(t, dir, lock.Name))
	}
}

// TestKilledIntentRecoveredByTakeover: a run killed after its output create,
// before its catalog commit, leaves only its lock record with the intent;
// the next writer takes the lock over (moving the intent to the journal)
// and removes the file it created. `distributor unlock` (lock.MoveIntent,
// then the record's removal) leaves the same for the next writer.
func TestKilledIntentRecoveredByTakeover(t *testing.T) {
	for _, how := range []string{"takeover", "unlock"} {
		t.Run(how, func(t *testing.T) {
			dir, st := newRoot(t)
			ch := change(map[string]string{"a.txt": "a"})
			d := &dying{Store: st}
			tx, err := beginAs(t, d, 5000, ch)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Apply(ch); !errors.Is(err, errKilled) {
				t.Fatalf("apply: %v, want the kill", err)
			}
			tx.End()
			if !exists(t, dir, "a.txt") || exists(t, dir, journal.Name) {
				t.Fatalf("after the kill: a.txt %v, journal %v; want the file and no journal object", exists(t, dir, "a.txt"), exists(t, dir, journal.Name))
			}
			info, _, err := lock.Read(context.Background(), st)
			if err != nil || len(info.Intent) == 0 {
				t.Fatalf("after the kill: lock record %v (%v), want one with the intent", info, err)
			}
			if how == "unlock" {
				if err := lock.MoveIntent(context.Background(), st, info); err != nil {
					t.Fatal(err)
				}
				if err := st.Delete(context.Background(), lock.Name); err != nil {
					t.Fatal(err)
				}
			}
			next, err := beginAs(t, st, 7, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer next.End()
			if next.Recovery == nil || !slices.Equal(next.Recovery.Removed, []string{"a.txt"}) {
				t.Fatalf("recovery %+v, want a.txt removed", next.Recovery)
			}
			if exists(t, dir, "a.txt") || exists(t, dir, journal.Name) {
				t.Errorf("after the recovery: a.txt %v, journal %v", exists(t, dir, "a.txt"), exists(t, dir, journal.Name))
			}
		})
	}
}

// TestLargeIntentGoesToTheJournal: an intent over IntentCap is written to
// the journal object, and the lock record carries none.
func TestLargeIntentGoesToTheJournal(t *testing.T) {
	dir, st := newRoot(t)
	files := map[string]string{}
	for i := 0; len(files) < 400; i++ {
		files[fmt.Sprintf("d/f%04d.txt", i)] = fmt.Sprint(i)
	}
	ch := change(files)
	if data, _, err := intentOf(ch, "r", "run", now); data != nil || err != nil {
		t.Fatalf("the intent fits the cap (%d bytes), or %v", len(data), err)
	}
	journaled := false
	h := &hooked{Store: st, before: func(op, p string) error {
		if p == catalog.FileName {
			info, _, _ := lock.Read(context.Background(), st)
			journaled = exists(t, dir, journal.Name) && len(info.Intent) == 0
		}
		return nil
	}}
	tx, err := beginAs(t, h, 1, ch)
	if err != nil {
		t.Fatal(err)
	}
	if info := tx.lk.Info(); len(info.Intent) > 0 {
		t.Errorf("the lock record carries an intent of %d bytes", len(info.Intent))
	}
	if _, err := tx.Apply(ch); err != nil {
		t.Fatal(err)
	}
	tx.End()
	if !journaled || exists(t, dir, journal.Name) {
		t.Errorf("journal object before the catalog %v, after the run %v; want it then, not after", journaled, exists(t, dir, journal.Name))
	}
}

// TestChangedIntentRewritesTheRecord: a change that differs from the one
// given to Begin (a second plan) is journaled in the record before the
// first write.
func TestChangedIntentRewritesTheRecord(t *testing.T) {
	dir, st := newRoot(t)
	first := change(map[string]string{"a.txt": "a"})
	second := change(map[string]string{"a.txt": "a", "b.txt": "b"})
	var ops int
	h := &hooked{Store: st, before: func(op, p string) error {
		if p == "a.txt" && ops == 0 {
			info, _, _ := lock.Read(context.Background(), st)
			j, err := journal.Decode(info.Intent)
			if err != nil {
				t.Errorf("before the first write: %v", err)
				return nil
			}
			ops = len(j.Ops)
		}
		return nil
	}}
	tx, err := beginAs(t, h, 1, first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Apply(second); err != nil {
		t.Fatal(err)
	}
	tx.End()
	if ops != 2 || exists(t, dir, journal.Name) {
		t.Errorf("before the first write the record journaled %d ops (want 2); journal object after %v", ops, exists(t, dir, journal.Name))
	}
}

// TestExistingJournalWins: moving a record's intent never replaces a
// journal already at the root.
func TestExistingJournalWins(t *testing.T) {
	_, st := newRoot(t)
	ctx := context.Background()
	if _, err := storage.PutIf(ctx, st, journal.Name, []byte("first"), ""); err != nil {
		t.Fatal(err)
	}
	if err := lock.MoveIntent(ctx, st, lock.Info{ID: "x", Intent: []byte(`{"later":true}`)}); err != nil {
		t.Fatalf("move over an existing journal: %v, want nil (it wins)", err)
	}
	if data, _, _ := st.Get(ctx, journal.Name); string(data) != "first" {
		t.Errorf("journal %q, want the one that was there", data)
	}
}

// TestTakeoverKeepsAnExistingJournal: a dead holder whose record carries
// an intent while a journal is at the root (it died recovering that
// journal, before any change of its own): the waiter that takes over
// recovers the journal, not the record's intent.
func TestTakeoverKeepsAnExistingJournal(t *testing.T) {
	dir, st := newRoot(t)
	ctx := context.Background()
	earlier, _, err := intentOf(change(map[string]string{"x.txt": "x"}), "earlier", "run", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.PutIf(ctx, st, journal.Name, earlier, ""); err != nil {
		t.Fatal(err)
	}
	own, _, err := intentOf(change(map[string]string{"y.txt": "y"}), "dead", "run", now)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := json.Marshal(lock.Info{ID: "dead", Host: "me", PID: 5000, Command: "run", Acquired: now, ExpiresAt: now, Intent: own})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.PutIf(ctx, st, lock.Name, rec, ""); err != nil {
		t.Fatal(err)
	}
	next, err := beginAs(t, st, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer next.End()
	if next.Recovery == nil || next.Recovery.Journal.RunID != "earlier" {
		t.Fatalf("recovery %+v, want the journal that was at the root (run earlier)", next.Recovery)
	}
	if exists(t, dir, journal.Name) {
		t.Errorf("a journal after the recovery: the record's intent replaced the one recovered")
	}
}

// TestSingleWriterJournalsInTheObject: a destination that sets
// single_writer may be on a server that ignores exclusive create, where the
// next run's lock create would replace a dead run's record and the intent
// in it; so its intent is never in the record: the journal object holds it
// before the first change, as before the intent moved into the lock.
func TestSingleWriterJournalsInTheObject(t *testing.T) {
	dir, st := newRoot(t)
	ch := change(map[string]string{"a.txt": "a"})
	checked := false
	h := &hooked{Store: st, before: func(op, p string) error {
		if p == catalog.FileName {
			checked = true
			info, _, err := lock.Read(context.Background(), st)
			if err != nil || len(info.Intent) > 0 || !exists(t, dir, journal.Name) {
				t.Errorf("before the catalog: lock record %v (%v), journal object %v; want the intent in the journal object only",
					info, err, exists(t, dir, journal.Name))
			}
		}
		return nil
	}}
	l := lock.Locker{Lease: time.Hour, Wait: 5 * time.Second, Host: "me", PID: 1, Alive: func(p int) bool { return p < 1000 }}
	tx, err := Begin(context.Background(), Options{Store: h, Command: "run", Lock: l, Now: func() time.Time { return now },
		Intent: ch, SingleWriter: true})
	if err != nil {
		t.Fatal(err)
	}
	if info := tx.lk.Info(); len(info.Intent) > 0 {
		t.Errorf("the lock record created carries an intent (%d bytes)", len(info.Intent))
	}
	if res, err := tx.Apply(ch); err != nil || !res.Committed {
		t.Fatalf("apply: %v %+v", err, res)
	}
	tx.End()
	if !checked {
		t.Error("the catalog was never written")
	}
	if exists(t, dir, journal.Name) || exists(t, dir, lock.Name) {
		t.Errorf("after the run: journal %v, lock %v; want neither", exists(t, dir, journal.Name), exists(t, dir, lock.Name))
	}
}
