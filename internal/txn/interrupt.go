package txn

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// InterruptedCleanup bounds what a transaction still does once its
// caller's context is done (a signal): its cleanup and the release of the
// lock end this long after, even on a server that stopped answering, so
// that a signal ends a run within seconds rather than after the store's
// timeouts and retries. What is left stays for the next writer, which
// recovers the root from the intent journal.
const InterruptedCleanup = 3 * time.Second

// interruption records when the caller's context of a Txn was done.
type interruption struct {
	parent context.Context
	once   sync.Once
	at     time.Time
}

// mark records the moment of the interruption (the first call wins) and
// returns when the work after it must end.
func (in *interruption) mark() time.Time {
	in.once.Do(func() { in.at = time.Now() })
	return in.at.Add(InterruptedCleanup)
}

// bounded returns base bounded by timeout (none when 0) and cancelled
// InterruptedCleanup after the caller's context is done, before or while
// the work runs.
func (t *Txn) bounded(base context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancelCause := context.WithCancelCause(base)
	cancelTimeout := func() {}
	if timeout > 0 {
		ctx, cancelTimeout = context.WithTimeout(ctx, timeout)
	}
	var mu sync.Mutex
	var timer *time.Timer
	interrupted := func() {
		by := t.intr.mark()
		mu.Lock()
		defer mu.Unlock()
		timer = time.AfterFunc(time.Until(by), func() {
			cancelCause(fmt.Errorf("the run was interrupted: its cleanup stopped %v later, leaving the rest to the next writer", InterruptedCleanup))
		})
	}
	stop := context.AfterFunc(t.intr.parent, interrupted)
	return ctx, func() {
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop() // the work ended first: no timer outlives it
		}
		mu.Unlock()
		cancelTimeout()
		cancelCause(nil)
	}
}

// cleanupContext is a cleanup's: the lock's (the caller's may be done),
// bounded by CleanupTimeout and the interruption.
func (t *Txn) cleanupContext() (context.Context, context.CancelFunc) {
	return t.bounded(t.lk.Context(), t.opts.CleanupTimeout)
}
