package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
)

// LockRoot takes the writer lock of a destination root for command (run,
// prune, reconcile-state), then recovers the root if a dead run left a
// journal, and returns the function that releases the lock. Every command
// that writes to a root calls it before reading the state it plans from,
// and holds it until its catalog is written.
//
// It waits up to App.LockTimeout for a lock another live process holds; the
// error then names the holder (host, pid, command, since when).
func (a *App) LockRoot(ctx context.Context, st storage.Store, command string) (unlock func(), err error) {
	_, unlock, err = a.LockRootContext(ctx, st, command)
	return unlock, err
}

// LockRootContext is LockRoot that also returns a context for the work done
// under the lock: it is cancelled, with lock.ErrLost as its cause, if the
// lease cannot be renewed because another process took the lock over, so a
// writer that lost its lock stops instead of racing the new holder.
func (a *App) LockRootContext(ctx context.Context, st storage.Store, command string) (held context.Context, unlock func(), err error) {
	l := &lock.Locker{Store: st, Wait: a.LockTimeout, NoWait: a.LockTimeout < 0, Now: a.Now, Lease: a.LockLease}
	k, err := l.Acquire(ctx, command)
	if err != nil {
		return nil, nil, err
	}
	held, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(k.Context(), func() { cancel(context.Cause(k.Context())) })
	unlock = func() {
		stop()
		if err := k.Release(context.WithoutCancel(ctx)); err != nil {
			a.Logger.Warn("release lock", "root", st.String(), "err", err)
		}
		cancel(nil)
	}
	rec, err := Recover(held, st, a.Now())
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("recover %s: %w", st, err)
	}
	if rec != nil {
		a.Logger.Warn("recovered a root left by a dead run", "root", st.String(), "dead_run", rec.Journal.RunID,
			"command", rec.Journal.Command, "started", rec.Journal.Started, "committed", rec.Committed,
			"rolled_forward", strings.Join(rec.RolledForward, ","), "removed", strings.Join(rec.Removed, ","),
			"dropped", strings.Join(rec.Dropped, ","), "temp_swept", rec.TempSwept)
	}
	return held, unlock, nil
}
