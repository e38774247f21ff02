package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/probe"
)

func newStore(t *testing.T) storage.Store {
	t.Helper()
	st, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// clock is a fake wall clock and a fake monotonic clock that move together
// only when the test says so.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	mono time.Duration
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Mono() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.mono += d
}

func locker(st storage.Store, host string, pid int, c *clock) *Locker {
	return &Locker{Store: st, Host: host, PID: pid, Now: c.Now, Mono: c.Mono, Lease: time.Hour, Wait: 50 * time.Millisecond,
		Poll: time.Millisecond, Alive: func(p int) bool { return p < 1000 }}
}

// acquireWhile runs l.Acquire in the background and, while it has not
// returned, calls step (which advances the fake clock) between short
// pauses, so that the waiter polls in between. It gives up after 2000 steps.
func acquireWhile(t *testing.T, l *Locker, step func()) (*Lock, error) {
	t.Helper()
	type result struct {
		k   *Lock
		err error
	}
	ch := make(chan result, 1)
	go func() {
		k, err := l.Acquire(context.Background(), "run")
		ch <- result{k, err}
	}()
	for i := 0; i < 2000; i++ {
		select {
		case r := <-ch:
			return r.k, r.err
		case <-time.After(2 * time.Millisecond):
			step()
		}
	}
	t.Fatal("Acquire did not return")
	return nil, nil
}

func TestAcquireReleaseAndHeldError(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	c := &clock{t: time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)}
	a, err := locker(st, "web1", 10, c).Acquire(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	_, err = locker(st, "web2", 20, c).Acquire(ctx, "prune")
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second acquire: %v, want HeldError", err)
	}
	for _, want := range []string{"run on host web1", "pid 10", "since 2026-06-19T12:00:00Z"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := locker(st, "web2", 20, c).Acquire(ctx, "prune")
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	b.Release(ctx)
	if _, _, err := Read(ctx, st); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("lock still present after release: %v", err)
	}
}

// TestHeldErrorSaysWhatTheSilenceMeans: a waiter that gives up after
// watching a live holder for less than its renewal interval says how long
// it saw the record unchanged next to how often the holder renews, not
// that the holder stopped renewing.
func TestHeldErrorSaysWhatTheSilenceMeans(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	c := &clock{t: time.Now()}
	hl := locker(st, "web1", 10, c)
	hl.Lease = time.Minute // renews every 15s
	holder, err := hl.Acquire(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(ctx)
	w := locker(st, "web2", 20, c)
	w.Lease, w.Now, w.Mono, w.Wait, w.Poll = time.Minute, time.Now, SystemClock, 1500*time.Millisecond, 50*time.Millisecond
	_, err = w.Acquire(ctx, "run")
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("waiter: %v, want HeldError", err)
	}
	if held.Silent <= 0 || held.Silent > held.Waited {
		t.Errorf("Silent %s, want more than 0 and at most the wait, %s", held.Silent, held.Waited)
	}
	want := fmt.Sprintf("; gave up after waiting %s (this run saw its record unchanged for the last %s; the holder changes it every 15s when it renews, "+
		"and a waiting run takes the lock over after watching it unchanged for 1m30s); if that run is gone, 'distributor unlock' removes the lock",
		held.Waited.Round(time.Second), held.Silent.Round(time.Second))
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "not renewed") {
		t.Errorf("error:\n%v\nwant it to contain\n%s", err, want)
	}
}

func TestWaitsForRelease(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	c := &clock{t: time.Now()}
	a, err := locker(st, "h", 1, c).Acquire(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		a.Release(ctx)
	}()
	l := locker(st, "h", 2, c)
	l.Now = time.Now // real clock so the wait runs out only after Wait
	l.Wait = 5 * time.Second
	b, err := l.Acquire(ctx, "run")
	if err != nil {
		t.Fatalf("waiter did not get the released lock: %v", err)
	}
	b.Release(ctx)
}

func TestStaleTakeover(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		host     string
		pid      int
		advance  time.Duration
		takeover bool
	}{
		{"silent past lease and allowance, other host", "other", 5, 2 * time.Hour, true},
		{"silent for less than lease and allowance, other host", "other", 5, time.Hour, false},
		{"live lease, other host", "other", 5, 0, false},
		{"dead pid, same host", "me", 5000, 0, true},
		{"live pid, same host", "me", 5, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t)
			c := &clock{t: time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)}
			old, err := locker(st, tc.host, tc.pid, c).Acquire(ctx, "run")
			if err != nil {
				t.Fatal(err)
			}
			old.stopRenewal() // the holder "dies": no renewal, no release
			// The waiter must watch the silent record: the fake clock
			// moves on only while it is waiting, by advance/100 per step.
			w := locker(st, "me", 7, c)
			if tc.takeover {
				w.Wait = 10 * time.Second
			}
			k, err := acquireWhile(t, w, func() {
				if tc.advance > 0 {
					c.Add(tc.advance / 100)
				} else {
					c.Add(time.Millisecond)
				}
			})
			if tc.takeover {
				if err != nil {
					t.Fatalf("no takeover: %v", err)
				}
				if got, _, _ := Read(ctx, st); got.ID != k.Info().ID {
					t.Errorf("lock holds %v", got)
				}
				// The old holder fenced itself long before: its renewal
				// reports the lapse, and it never regains the lock.
				if err := old.Renew(ctx); !errors.Is(err, ErrLeaseLapsed) && !errors.Is(err, ErrLost) {
					t.Errorf("old holder renew: %v, want ErrLeaseLapsed or ErrLost", err)
				}
				k.Release(ctx)
			} else if err == nil {
				t.Fatalf("took over a live lock")
			}
		})
	}
}

// lostAnswer writes the first conditional Put but reports a precondition failure, as a
// retried request whose first attempt succeeded would.
type lostAnswer struct {
	storage.Store
	once sync.Once
}

func (s *lostAnswer) Put(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode != storage.PutIfVersion {
		return s.Store.Put(ctx, path, r, size, opts)
	}
	var lie bool
	s.once.Do(func() { lie = true })
	nv, err := s.Store.Put(ctx, path, r, size, opts)
	if lie && err == nil {
		return "", fmt.Errorf("412: %w", storage.ErrPrecondition)
	}
	return nv, err
}

func TestLostAnswerDoesNotDeadlock(t *testing.T) {
	ctx := context.Background()
	st := &lostAnswer{Store: newStore(t)}
	c := &clock{t: time.Now()}
	k, err := locker(st, "h", 1, c).Acquire(ctx, "run")
	if err != nil {
		t.Fatalf("own lock not recognised: %v", err)
	}
	k.Release(ctx)
}

// TestMutualExclusion: many lockers increment a counter object with
// read-modify-write under the lock; no increment is lost.
func TestMutualExclusion(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	const workers, rounds = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			l := &Locker{Store: st, Host: "h", PID: 100 + w, Lease: time.Minute, Wait: time.Minute, Poll: time.Millisecond,
				Alive: func(int) bool { return true }}
			for r := 0; r < rounds; r++ {
				k, err := l.Acquire(ctx, "run")
				if err != nil {
					errs <- err
					return
				}
				n := 0
				if data, _, err := st.Get(ctx, "counter"); err == nil {
					n, _ = strconv.Atoi(string(data))
				}
				if _, err := st.Put(ctx, "counter", strings.NewReader(strconv.Itoa(n+1)), int64(len(strconv.Itoa(n+1))), storage.PutOptions{}); err != nil {
					errs <- err
				}
				if err := k.Release(ctx); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	data, _, err := st.Get(ctx, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != strconv.Itoa(workers*rounds) {
		t.Errorf("counter %s, want %d: an update was lost", data, workers*rounds)
	}
}

// TestDeadClaimerDoesNotBlock: a waiter that died in the middle of a
// takeover leaves its claim; the claim is stale in turn and is taken over.
func TestDeadClaimerDoesNotBlock(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	c := &clock{t: time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)}
	dead := Info{ID: "deadholder", Host: "me", PID: 5000, Command: "run", Acquired: c.Now(), ExpiresAt: c.Now().Add(time.Hour)}
	claimer := Info{ID: "deadclaimer", Host: "me", PID: 5001, Command: "run", Acquired: c.Now(), ExpiresAt: c.Now().Add(time.Hour)}
	put := func(name string, i Info) {
		data, _ := json.Marshal(i)
		if _, err := storage.PutIf(ctx, st, name, data, ""); err != nil {
			t.Fatal(err)
		}
	}
	put(Name, dead)
	put(Name+".claim-deadholder", claimer)
	k, err := locker(st, "me", 7, c).Acquire(ctx, "run")
	if err != nil {
		t.Fatalf("blocked by a dead claimer's claim: %v", err)
	}
	if err := k.Release(ctx); err != nil {
		t.Fatal(err)
	}
	var left []string
	st.List(ctx, "", func(i storage.Info) error { left = append(left, i.Path); return nil })
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestFenceLapsesOnTheMonotonicClock: a holder that cannot renew (here: its
// renewal loop is stopped, as in a paused process) is fenced once its lease
// minus the margin has passed on its monotonic clock, whatever its wall
// clock says; the fence never comes back, the work context is cancelled
// with ErrLeaseLapsed, and Release leaves the record for the successor.
func TestFenceLapsesOnTheMonotonicClock(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	c := &clock{t: time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)}
	l := locker(st, "web1", 10, c)
	k, err := l.Acquire(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	k.stopRenewal()
	work, stop := k.Bind(ctx)
	defer stop()
	c.Add(44 * time.Minute) // lease 1h, margin 15m: still within
	if err := k.Fence(); err != nil {
		t.Fatalf("fence within the lease: %v", err)
	}
	if err := work.Err(); err != nil {
		t.Fatalf("work context within the lease: %v", err)
	}
	c.Add(2 * time.Minute)
	// Err sees the lapse at once, before any timer had a chance to fire.
	if err := work.Err(); err == nil || !errors.Is(context.Cause(work), ErrLeaseLapsed) {
		t.Fatalf("work context after the lapse: %v (cause %v), want cancelled with ErrLeaseLapsed", err, context.Cause(work))
	}
	if err := k.Fence(); !errors.Is(err, ErrLeaseLapsed) {
		t.Fatalf("fence after the lapse: %v", err)
	}
	// A renewal that would succeed does not revive the lock.
	if err := k.Renew(ctx); !errors.Is(err, ErrLeaseLapsed) {
		t.Fatalf("renew after the lapse: %v", err)
	}
	if err := k.Fence(); !errors.Is(err, ErrLeaseLapsed) {
		t.Fatalf("fence after a late renewal: %v", err)
	}
	if err := k.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if info, _, err := Read(ctx, st); err != nil || info.ID != k.Info().ID {
		t.Errorf("a lapsed holder removed the record on release: %+v %v", info, err)
	}
}

// TestRenewalMovesTheFence: each successful renewal restarts the lease from
// when it was sent, and a failed renewal does not.
func TestRenewalMovesTheFence(t *testing.T) {
	ctx := context.Background()
	st := &failing{Store: newStore(t)}
	c := &clock{t: time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)}
	k, err := locker(st, "web1", 10, c).Acquire(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	k.stopRenewal()
	c.Add(40 * time.Minute)
	if err := k.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	c.Add(40 * time.Minute) // 80m after acquiring, 40m after renewing
	if err := k.Fence(); err != nil {
		t.Fatalf("fence 40m after a renewal: %v", err)
	}
	st.fail.Store(true)
	if err := k.Renew(ctx); err == nil {
		t.Fatal("renewal through a failing store succeeded")
	}
	c.Add(6 * time.Minute) // 46m after the last good renewal
	if err := k.Fence(); !errors.Is(err, ErrLeaseLapsed) {
		t.Fatalf("fence after a failed renewal: %v, want ErrLeaseLapsed", err)
	}
}

// failing fails every conditional Put once fail is set.
type failing struct {
	storage.Store
	fail atomic.Bool
}

func (s *failing) Put(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion && s.fail.Load() {
		return "", errors.New("injected: server unreachable")
	}
	return s.Store.Put(ctx, path, r, size, opts)
}

// TestSlowClockHolderIsNotTakenOver: a live holder whose wall clock is hours
// slow writes lease ends that look long expired to everyone else. As long
// as it renews, a waiter never takes its lock over: only a record that
// stays unchanged for a lease plus the allowance is stale.
func TestSlowClockHolderIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	c := &clock{t: time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)}
	hl := locker(st, "slow", 10, c)
	hl.Now = func() time.Time { return c.Now().Add(-3 * time.Hour) }
	holder, err := hl.Acquire(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	holder.stopRenewal() // the test renews by hand, in step with the fake clock
	if info, _, _ := Read(ctx, st); !info.ExpiresAt.Before(c.Now()) {
		t.Fatalf("the slow holder's record should look expired: %v", info)
	}
	w := locker(st, "other", 20, c)
	w.Wait = 2 * time.Second
	steps := 0
	_, err = acquireWhile(t, w, func() {
		c.Add(10 * time.Minute)
		if err := holder.Renew(ctx); err != nil {
			t.Errorf("renew: %v", err)
		}
		steps++
	})
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("waiter: %v, want HeldError (it took over a live lock)", err)
	}
	if steps < 10 {
		t.Fatalf("only %d renewals happened while the waiter watched", steps)
	}
	if err := holder.Fence(); err != nil {
		t.Errorf("the holder lost its fence: %v", err)
	}
	// Once the holder goes silent, the same waiter takes over after a
	// lease plus the allowance.
	w.Wait = 10 * time.Second
	k, err := acquireWhile(t, w, func() { c.Add(time.Minute) })
	if err != nil {
		t.Fatalf("no takeover of the silent lock: %v", err)
	}
	k.Release(ctx)
}

// TestUnreadableRecordIsWatched: an empty or garbled lock record (an
// exclusive create whose content is not written yet) is not stale by
// itself; it is taken over only after staying unchanged for a lease plus
// the allowance.
func TestUnreadableRecordIsWatched(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	c := &clock{t: time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)}
	if _, err := storage.PutIf(ctx, st, Name, nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := locker(st, "me", 7, c).Acquire(ctx, "run"); err == nil {
		t.Fatal("took over an empty lock record at once")
	}
	w := locker(st, "me", 7, c)
	w.Wait = 10 * time.Second
	k, err := acquireWhile(t, w, func() { c.Add(5 * time.Minute) })
	if err != nil {
		t.Fatalf("the empty record was never taken over: %v", err)
	}
	k.Release(ctx)
}

// TestWaitIsReported: a waiter says once, at the start of its wait, who
// holds the lock and how long it will wait (then again only every 30s, or
// a tenth of a longer wait), instead of waiting in silence.
func TestWaitIsReported(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	c := &clock{t: time.Now()}
	a, err := locker(st, "h", 1, c).Acquire(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	// A releases once B has reported its wait (not after a fixed sleep,
	// which a busy machine can outlast before B even looks).
	waiting := make(chan struct{})
	go func() {
		<-waiting
		a.Release(ctx)
	}()
	l := locker(st, "h", 2, c)
	l.Now = time.Now
	l.Wait = 5 * time.Second
	var reports []Info
	var limits []time.Duration
	l.OnWait = func(h Info, waited, limit time.Duration) {
		reports = append(reports, h)
		limits = append(limits, limit)
		if len(reports) == 1 {
			close(waiting)
		}
	}
	b, err := l.Acquire(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	b.Release(ctx)
	if len(reports) != 1 || reports[0].PID != 1 || reports[0].Host != "h" || reports[0].Command != "run" || limits[0] != 5*time.Second {
		t.Errorf("reports %+v, limits %v: want one naming pid 1 on h, limit 5s", reports, limits)
	}
	if got := waitReportEvery(2 * time.Minute); got != 30*time.Second {
		t.Errorf("waitReportEvery(2m) = %s", got)
	}
	if got := waitReportEvery(time.Hour); got != 6*time.Minute {
		t.Errorf("waitReportEvery(1h) = %s", got)
	}
}

// conditionIgnorer breaks the conditions of PutIf as servers were seen to:
// ignore (the write succeeds whatever the condition), or applyAnyway
// (the write is refused with a precondition failure, and applied).
type conditionIgnorer struct {
	storage.Store
	ignore, applyAnyway bool
	armed               atomic.Bool // only once the lock is held
}

func (s *conditionIgnorer) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode != storage.PutIfVersion || !s.armed.Load() {
		return s.Store.Put(ctx, p, r, size, opts)
	}
	if _, err := s.Store.Put(ctx, p, r, size, storage.PutOptions{}); err != nil {
		return "", err
	}
	if s.applyAnyway {
		return "", fmt.Errorf("412: %w", storage.ErrPrecondition)
	}
	return "whatever", nil
}

// TestProveExclusion: the proof on the held lock object passes on a store
// that enforces its conditions and leaves the record as it was; on one that
// ignores them, or refuses and writes anyway, it fails with the missing
// capability, and the record still names the holder, so Release removes
// it.
func TestProveExclusion(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		st      func(storage.Store) *conditionIgnorer
		missing string
	}{
		{"enforced", func(st storage.Store) *conditionIgnorer { return &conditionIgnorer{Store: st} }, ""},
		{"ignored", func(st storage.Store) *conditionIgnorer { return &conditionIgnorer{Store: st, ignore: true} }, probe.ExclusiveCreate},
		{"refused and applied", func(st storage.Store) *conditionIgnorer {
			return &conditionIgnorer{Store: st, applyAnyway: true}
		}, probe.ExclusiveCreate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := newStore(t)
			st := tc.st(base)
			k, err := locker(st, "h", 1, &clock{t: time.Now()}).Acquire(ctx, "run")
			if err != nil {
				t.Fatal(err)
			}
			before, _, _ := base.Get(ctx, Name)
			st.armed.Store(st.ignore || st.applyAnyway)
			err = k.ProveExclusion(ctx, nil)
			var ue *probe.UnenforcedError
			switch {
			case tc.missing == "" && err != nil:
				t.Fatalf("proof on an enforcing store: %v", err)
			case tc.missing != "" && (!errors.As(err, &ue) || ue.Capability != tc.missing):
				t.Fatalf("proof: %v, want an UnenforcedError for %q", err, tc.missing)
			}
			if after, _, _ := base.Get(ctx, Name); tc.missing == "" && string(after) != string(before) {
				t.Errorf("the proof changed the record: %s -> %s", before, after)
			}
			if info, _, err := Read(ctx, base); err != nil || info.ID != k.Info().ID {
				t.Errorf("after the proof the record is %+v (%v), want the holder's", info, err)
			}
			if err := k.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if _, _, err := base.Get(ctx, Name); !errors.Is(err, storage.ErrNotExist) {
				t.Errorf("lock after Release: %v, want none", err)
			}
		})
	}
}
