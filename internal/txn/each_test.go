package txn

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestEachRunsEveryItemOnceWithinJobs: each runs every item exactly once,
// never more than Jobs at a time, and calls ok once per item, one call at
// a time.
func TestEachRunsEveryItemOnceWithinJobs(t *testing.T) {
	for _, jobs := range []int{1, 3, 8} {
		tx := &Txn{opts: Options{Jobs: jobs}}
		const n = 200
		var running, peak atomic.Int32
		runs := make([]atomic.Int32, n)
		var inOK atomic.Int32
		oks := map[int]int{}
		err := tx.each(context.Background(), n, func(_ context.Context, i int) error {
			cur := running.Add(1)
			for {
				p := peak.Load()
				if cur <= p || peak.CompareAndSwap(p, cur) {
					break
				}
			}
			runs[i].Add(1)
			running.Add(-1)
			return nil
		}, func(i int) {
			if inOK.Add(1) != 1 {
				t.Error("ok called concurrently")
			}
			oks[i]++
			inOK.Add(-1)
		})
		if err != nil {
			t.Fatalf("jobs %d: %v", jobs, err)
		}
		for i := range runs {
			if runs[i].Load() != 1 || oks[i] != 1 {
				t.Fatalf("jobs %d: item %d ran %d times, ok %d times", jobs, i, runs[i].Load(), oks[i])
			}
		}
		if p := peak.Load(); p > int32(jobs) {
			t.Errorf("jobs %d: %d items ran at once", jobs, p)
		}
	}
}

// TestEachStopsAfterFirstError: after an item fails, each starts no new
// item, lets those in flight finish (their successes still reach ok), and
// returns the first error; ok never hears of a failed item. With one job
// the items after the failed one never start; with more, how many others
// were taken while it ran depends on the scheduler, so only the rest is
// checked.
func TestEachStopsAfterFirstError(t *testing.T) {
	const n, failing = 100, 10
	for _, jobs := range []int{1, 3} {
		tx := &Txn{opts: Options{Jobs: jobs}}
		boom := errors.New("boom")
		var mu sync.Mutex
		started := map[int]bool{}
		var okCount int
		err := tx.each(context.Background(), n, func(_ context.Context, i int) error {
			mu.Lock()
			started[i] = true
			mu.Unlock()
			if i == failing {
				return boom
			}
			return nil
		}, func(i int) {
			if i == failing {
				t.Errorf("jobs %d: ok called for the failed item", jobs)
			}
			okCount++
		})
		if !errors.Is(err, boom) {
			t.Fatalf("jobs %d: each: %v, want the item's error", jobs, err)
		}
		if jobs == 1 && len(started) != failing+1 {
			t.Errorf("jobs 1: %d items started, want the %d up to the failed one", len(started), failing+1)
		}
		if okCount != len(started)-1 {
			t.Errorf("jobs %d: ok called %d times for %d started items, one of them failed", jobs, okCount, len(started))
		}
	}
}

// TestEachEndsWithTheContext: a cancelled context starts no item and its
// cause is part of the error.
func TestEachEndsWithTheContext(t *testing.T) {
	tx := &Txn{opts: Options{Jobs: 2}}
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("lease lapsed")
	cancel(cause)
	ran := false
	err := tx.each(ctx, 5, func(context.Context, int) error { ran = true; return nil }, func(int) {})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, cause) || ran {
		t.Fatalf("each on a cancelled context: %v (ran %v), want Canceled and its cause, nothing run", err, ran)
	}
}
