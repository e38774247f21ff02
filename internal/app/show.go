package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// ShowOptions are the inputs of ShowState.
type ShowOptions struct {
	Root
	Logger *slog.Logger
}

// ShowState reads a root's catalog for `distributor state show`: its top
// fields, and outputs and stored document that the report streams from a copy
// until its Close. State none is not an error; legacy, invalid and future are.
func (a *App) ShowState(ctx context.Context, cfg *config.Config, opts ShowOptions) (*report.StateShow, error) {
	t, err := resolveMaint(cfg, "state show", opts.Root)
	if err != nil {
		return nil, err
	}
	// The copy is kept: the text table reads the records twice.
	m, _, err := a.openMaintRoot(ctx, t, false)
	if m == nil {
		return nil, err
	}
	defer m.store.Close() // the report closes m.cat
	if err := refuseShowState(m.store.String(), m.state); err != nil {
		return nil, err
	}
	rep := &report.StateShow{Target: t.head, State: string(m.state.Status), Warnings: m.warnings}
	rep.Root = m.store.String()
	if c := m.cat; c != nil {
		src := &shownCatalog{ctx: ctx, root: rep.Root, c: c, raw: c.baseCopy()}
		if src.raw == nil {
			// Not sorted: c is a sorted copy, the stored bytes are read again.
			if src.raw, err = spoolStored(ctx, m.store, m.version); err != nil {
				c.close()
				return nil, err
			}
		}
		rep.SchemaVersion, rep.Header, rep.Count = catalog.SchemaVersion, c.Header, c.Count
		rep.Stream(src)
	}
	// Logged too, for --output json, which prints the stored document alone.
	for _, w := range rep.Warnings {
		a.Logger.Warn(w, "root", rep.Root)
	}
	return rep, nil
}

// spoolStored copies the catalog, still at version, into a Spool.
func spoolStored(ctx context.Context, st storage.Store, version storage.Version) (*txn.Spool, error) {
	data, ver, err := st.Get(ctx, catalog.FileName)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", catalog.FileName, st, err)
	}
	if ver != version {
		return nil, fmt.Errorf("%s at %s changed while it was being read (a writer is at work): try again", catalog.FileName, st)
	}
	raw := txn.NewSpool()
	if _, err := raw.Write(data); err != nil {
		raw.Close()
		return nil, err
	}
	return raw, nil
}

// shownCatalog streams records from c, stored bytes from raw (c's copy if sorted).
type shownCatalog struct {
	ctx  context.Context
	root string
	c    *maintCatalog
	raw  *txn.Spool
}

func (s *shownCatalog) Outputs(fn func(*catalog.Output) error) error {
	var fnErr error
	err := s.c.each(s.ctx, func(o *catalog.Output) error {
		fnErr = fn(o)
		return fnErr
	})
	if err != nil && fnErr == nil {
		return fmt.Errorf("read the copy of %s at %s: %w", catalog.FileName, s.root, err)
	}
	return err
}

func (s *shownCatalog) WriteRaw(w io.Writer) error {
	r, err := s.raw.Open()
	if err == nil {
		_, err = io.Copy(w, r)
	}
	return err
}

func (s *shownCatalog) Close() error {
	if s.raw != s.c.copy {
		s.raw.Close()
	}
	s.c.close()
	return nil
}

func refuseShowState(root string, s catalog.State) error {
	switch s.Status {
	case catalog.StatusNone, catalog.StatusCatalog:
		return nil
	case catalog.StatusLegacy:
		return fmt.Errorf("state legacy: %s at %s has schema_version %d, superseded legacy state that this distributor does not read (`distributor run` on this destination replaces it)",
			catalog.FileName, root, s.SchemaVersion)
	case catalog.StatusFuture:
		return fmt.Errorf("state future: %s at %s has schema_version %d, newer than this distributor understands (%d): upgrade distributor",
			catalog.FileName, root, s.SchemaVersion, catalog.SchemaVersion)
	default:
		return fmt.Errorf("state invalid: %s at %s: %v", catalog.FileName, root, s.Problem)
	}
}

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
	rep.Stale = (&lock.Locker{Store: st, Now: a.Now}).Stale(info)
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
