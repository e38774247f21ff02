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
	l := &lock.Locker{Store: st, Wait: a.LockTimeout, NoWait: a.LockTimeout < 0, Now: a.Now}
	k, err := l.Acquire(ctx, command)
	if err != nil {
		return nil, err
	}
	unlock = func() {
		if err := k.Release(context.WithoutCancel(ctx)); err != nil {
			a.Logger.Warn("release lock", "root", st.String(), "err", err)
		}
	}
	rec, err := Recover(ctx, st, a.Now())
	if err != nil {
		unlock()
		return nil, fmt.Errorf("recover %s: %w", st, err)
	}
	if rec != nil {
		a.Logger.Warn("recovered a root left by a dead run", "root", st.String(), "dead_run", rec.Journal.RunID,
			"command", rec.Journal.Command, "started", rec.Journal.Started, "committed", rec.Committed,
			"rolled_forward", strings.Join(rec.RolledForward, ","), "removed", strings.Join(rec.Removed, ","),
			"dropped", strings.Join(rec.Dropped, ","), "temp_swept", rec.TempSwept)
	}
	return unlock, nil
}
