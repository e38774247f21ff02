package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
)

// UnlockOptions are the inputs of Unlock.
type UnlockOptions struct {
	Root
	// Force removes a lock whose holder looks alive.
	Force  bool
	Logger *slog.Logger
}

// Unlock removes a stale lock (lease expired, or a gone holder on this host)
// or, with Force, any. The next writer recovers, from the journal (an intent
// in the record moves there first: lock.MoveIntent).
func (a *App) Unlock(ctx context.Context, cfg *config.Config, opts UnlockOptions) (*report.Unlock, error) {
	t, err := resolveMaint(cfg, "unlock", opts.Root)
	if err != nil {
		return nil, err
	}
	rep := &report.Unlock{Target: t.head}
	fail := func(err error) (*report.Unlock, error) { rep.Fail(err); return rep, nil }
	st, err := a.openMaint(ctx, t)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	rep.Root = st.String()
	info, _, err := lock.Read(ctx, st)
	if errors.Is(err, storage.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return fail(fmt.Errorf("read %s: %w", lock.Name, err))
	}
	rep.Locked = true
	rep.Holder = &report.LockHolder{ID: info.ID, Host: info.Host, PID: info.PID, Command: info.Command,
		Acquired: report.FormatLockTime(info.Acquired), ExpiresAt: report.FormatLockTime(info.ExpiresAt)}
	l := &lock.Locker{Store: st, Now: a.Now}
	rep.Stale = l.Stale(info)
	if !rep.Stale && !opts.Force {
		return fail(fmt.Errorf("the holder looks alive (lease until %s): wait for it, or, if you are sure no run is active on this root, rerun with --force", rep.Holder.ExpiresAt))
	}
	// The holder's unsettled change is the next writer's to recover: its
	// intent goes to the journal before the record goes.
	if err := lock.MoveIntent(ctx, st, info); err != nil {
		return fail(fmt.Errorf("%w; the lock was not removed", err))
	}
	// A waiter may have taken over (moving the same intent): not ours to remove.
	if now, _, err := lock.Read(ctx, st); err == nil && now.ID != info.ID {
		return fail(fmt.Errorf("the lock changed hands while unlocking (now held by %s): it was not removed", now))
	}
	if err := st.Delete(ctx, lock.Name); err != nil {
		return fail(fmt.Errorf("remove %s: %w", lock.Name, err))
	}
	rep.Removed = true
	a.Logger.Warn("removed the lock of a destination root", "root", rep.Root, "holder", info.String(), "stale", rep.Stale)
	return rep, nil
}
