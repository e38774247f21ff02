package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// ReconcileOptions are the inputs of `distributor reconcile-state`.
type ReconcileOptions struct {
	MaintOptions
	// AllOwners checks every owner's records, not just the selected
	// pipeline/destination's.
	AllOwners bool
	// DryRun reports without rewriting the catalog.
	DryRun bool
}

// ReconcileState repairs a catalog after files were removed behind
// distributor's back: it drops the records (the selected owner's, or every
// owner's) whose file is missing from storage, and reports the unmanaged
// storage paths that no record holds (reserved .distributor* names
// excluded). It deletes no file, adopts nothing, checks no digest and never
// rewrites legacy, invalid or future state.
//
// The returned error is for invalid options; everything after the root is
// resolved, including failures, is in the report.
func (a *App) ReconcileState(ctx context.Context, cfg *config.Config, opts ReconcileOptions) (*report.ReconcileState, error) {
	t, err := resolveMaint(cfg, "reconcile-state", opts.MaintOptions)
	if err != nil {
		return nil, err
	}
	rep := &report.ReconcileState{Command: "reconcile-state", PipelineID: t.owner.PipelineID, DestinationID: t.owner.DestinationID,
		Root: t.root, DryRun: opts.DryRun, AllOwners: opts.AllOwners,
		Missing: []report.Record{}, Unmanaged: []string{}, Removed: []report.Record{}, TempFiles: []string{}}
	fail := func(err error) (*report.ReconcileState, error) {
		rep.Error, rep.ErrorDetail = report.Errors(err)
		rep.Cause = err
		a.logFailure("reconcile-state failed", t.owner, err)
		return rep, nil
	}
	m, err := a.openMaintRoot(ctx, t, "reconcile-state", !opts.DryRun)
	if err != nil {
		return fail(err)
	}
	defer m.close()
	st, r := m.store, m.root
	rep.Root = st.String()
	rep.State = string(r.State.Status)
	rep.Warnings = m.warnings
	if err := refuseState("reconcile-state", rep.Root, t.owner, r.State); err != nil {
		return fail(err)
	}
	// Temporary files interrupted writes left: removed under the lock,
	// listed in a dry run.
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
	c := r.State.Catalog
	if c == nil { // state none: no records, everything is unmanaged
		c = &catalog.Catalog{}
	}
	rep.Unmanaged = unmanagedPaths(r.Listing, c)
	keep := ownedBy(t.owner, opts.AllOwners)
	drop := map[string]bool{}
	for i := range c.Outputs {
		o := &c.Outputs[i]
		if !keep(o) {
			continue
		}
		rep.Checked++
		if _, listed := r.Listing[o.Path]; listed {
			continue
		}
		// Confirm with Stat before dropping a record: only a file storage
		// says does not exist is missing.
		_, err := st.Stat(ctx, o.Path)
		switch {
		case err == nil:
			continue
		case !errors.Is(err, storage.ErrNotExist):
			return fail(fmt.Errorf("check %s: %w", o.Path, err))
		}
		rep.Missing = append(rep.Missing, report.RecordOf(o))
		drop[o.Path] = true
	}
	if opts.DryRun || len(drop) == 0 {
		return rep, nil
	}
	if _, err := m.tx.Apply(&txn.Change{Base: r.Version, Final: a.dropping(c, slices.Sorted(maps.Keys(drop)))}); err != nil {
		return fail(err)
	}
	rep.Removed = append(rep.Removed, rep.Missing...)
	for _, m := range rep.Removed {
		a.Logger.Info("dropped record of missing file", "path", m.Path, "pipeline", m.PipelineID, "destination", m.DestinationID)
	}
	return rep, nil
}

// unmanagedPaths lists, sorted, the paths in listing that no record of c
// holds, leaving out reserved .distributor* names.
func unmanagedPaths(listing map[string]int64, c *catalog.Catalog) []string {
	recorded := c.Index()
	out := []string{}
	for p := range listing {
		if recorded[p] == nil && !cleanpath.HasReservedSegment(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
