package txn

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// InterruptedCleanup bounds what a transaction still does once its
// caller's context is done (the run was interrupted, by a signal): its
// cleanup after the failure and the release of the lock end this long
// after the interruption, even on a server that stopped answering. What
// is left then stays for the next writer, which recovers the root from the
// intent journal (and takes over the lock of a dead process on this host
// at once, any other after its lease). A signal thus ends a run within
// seconds rather than after the store's own timeouts and retries.
const InterruptedCleanup = 3 * time.Second

// interruption records when the caller's context of a Txn was done.
type interruption struct {
	parent context.Context
	mu     sync.Mutex
	at     time.Time // zero until seen done
}

// mark records the moment of the interruption (the first call wins) and
// returns when the work after it must end.
func (in *interruption) mark() time.Time {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.at.IsZero() {
		in.at = time.Now()
	}
	return in.at.Add(InterruptedCleanup)
}

// bounded returns base bounded by timeout (none when 0) and by the
// interruption: it is cancelled InterruptedCleanup after the caller's
// context is done, whether that happened before or while the work runs.
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

// cleanupContext is the context of a cleanup after a failure: the lock's
// (the caller's may be cancelled already), bounded by
// Options.CleanupTimeout and by the interruption.
func (t *Txn) cleanupContext() (context.Context, context.CancelFunc) {
	return t.bounded(t.lk.Context(), t.opts.CleanupTimeout)
}
