package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
)

// ReconcileOptions are the inputs of ReconcileState.
type ReconcileOptions struct {
	Root
	// AllOwners checks every owner's records, not just the selected one's.
	AllOwners bool
	// DryRun reports without rewriting the catalog.
	DryRun bool
	Logger *slog.Logger
	Tuning
}

// ReconcileState drops the records whose file was removed behind distributor's
// back and reports unmanaged paths. It deletes and adopts nothing, checks no
// digest and never rewrites legacy, invalid or future state. The error is for
// invalid options; the rest is reported.
func (a *App) ReconcileState(ctx context.Context, cfg *config.Config, opts ReconcileOptions) (*report.ReconcileState, error) {
	t, err := resolveMaint(cfg, "reconcile-state", opts.Root)
	if err != nil {
		return nil, err
	}
	rep := &report.ReconcileState{Target: t.head, DryRun: opts.DryRun, AllOwners: opts.AllOwners,
		Missing: []report.Record{}, Unmanaged: []string{}, Removed: []report.Record{}, TempFiles: []string{}}
	fail := func(err error) (*report.ReconcileState, error) { a.maintFailed(&rep.Failure, t, err); return rep, nil }
	m, err := a.openMaintRoot(ctx, t, !opts.DryRun)
	if m != nil {
		defer m.close()
		rep.Root, rep.State, rep.Warnings, rep.RootRecovery = m.store.String(), string(m.state.Status), m.warnings, m.recovery()
	}
	if err != nil {
		return fail(err)
	}
	st := m.store
	// Temporary files: removed under the lock, listed in a dry run.
	var temps []string
	if m.tx != nil {
		temps, err = m.tx.SweepTemp(false)
	} else {
		temps, err = st.SweepTemp(ctx, storage.SweepOptions{DryRun: true})
	}
	if err != nil {
		return fail(fmt.Errorf("temporary files: %w", err))
	}
	rep.TempFiles = append(rep.TempFiles, temps...)
	ctx = m.ctx(ctx)
	keep := ownedBy(t.owner, opts.AllOwners)
	var drop []string
	err = mergeListing(ctx, st, m.cat, func(o *catalog.Output, l *listed) error {
		switch {
		case o == nil:
			if !cleanpath.HasReservedSegment(l.Path) {
				rep.Unmanaged = append(rep.Unmanaged, l.Path)
			}
			return nil
		case !keep(o):
			return nil
		}
		rep.Checked++
		if l != nil {
			return nil
		}
		// Only a file Stat says does not exist is missing.
		_, err := st.Stat(ctx, o.Path)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, storage.ErrNotExist):
			return fmt.Errorf("check %s: %w", o.Path, err)
		}
		rep.Missing = append(rep.Missing, report.RecordOf(o))
		drop = append(drop, o.Path)
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if opts.DryRun || len(drop) == 0 {
		return rep, nil
	}
	ch := m.change()
	ch.Final = a.dropping(m.cat.Header, drop)
	if _, err := m.tx.Apply(ch); err != nil {
		return fail(err)
	}
	rep.Removed = append(rep.Removed, rep.Missing...)
	for _, m := range rep.Removed {
		a.Logger.Info("dropped record of missing file", "path", m.Path, "pipeline", m.PipelineID, "destination", m.DestinationID)
	}
	return rep, nil
}
