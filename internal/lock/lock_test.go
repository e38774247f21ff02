package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
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

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func locker(st storage.Store, host string, pid int, c *clock) *Locker {
	return &Locker{Store: st, Host: host, PID: pid, Now: c.Now, Lease: time.Hour, Wait: 50 * time.Millisecond,
		Poll: 5 * time.Millisecond, Alive: func(p int) bool { return p < 1000 }}
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
		{"expired lease, other host", "other", 5, 2 * time.Hour, true},
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
			close(old.stop) // the holder "dies": no renewal, no release
			<-old.done
			c.Add(tc.advance)
			k, err := locker(st, "me", 7, c).Acquire(ctx, "run")
			if tc.takeover {
				if err != nil {
					t.Fatalf("no takeover: %v", err)
				}
				if got, _, _ := Read(ctx, st); got.ID != k.Info().ID {
					t.Errorf("lock holds %v", got)
				}
				// The old holder's renewal now reports the loss.
				if err := old.Renew(ctx); !errors.Is(err, ErrLost) {
					t.Errorf("old holder renew: %v, want ErrLost", err)
				}
				k.Release(ctx)
			} else if err == nil {
				t.Fatalf("took over a live lock")
			}
		})
	}
}

// lostAnswer writes the first PutIf but reports a precondition failure, as a
// retried request whose first attempt succeeded would.
type lostAnswer struct {
	storage.Store
	once sync.Once
}

func (s *lostAnswer) PutIf(ctx context.Context, path string, data []byte, v storage.Version) (storage.Version, error) {
	var lie bool
	s.once.Do(func() { lie = true })
	nv, err := s.Store.PutIf(ctx, path, data, v)
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
				if err := st.Put(ctx, "counter", strings.NewReader(strconv.Itoa(n+1)), int64(len(strconv.Itoa(n+1)))); err != nil {
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
		if _, err := st.PutIf(ctx, name, data, ""); err != nil {
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
