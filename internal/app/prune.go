package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
)

// PruneOptions are the inputs of `distributor prune`.
type PruneOptions struct {
	MaintOptions
	// Apply deletes the selected outputs; otherwise prune is a dry run that
	// only lists them.
	Apply bool
}

// SelectPrune returns, sorted by path, the outputs owned by owner that the
// retention policy selects: those whose UpdatedAt is strictly before
// now-olderThan, except the owner's keepMin newest outputs, which are never
// selected. "Newest" orders by UpdatedAt, latest first, and among equal
// UpdatedAt by path, byte-wise ascending. Other owners' outputs are never
// selected. It is a pure function: outputs is not modified.
func SelectPrune(outputs []catalog.Output, owner catalog.Owner, now time.Time, olderThan time.Duration, keepMin int) []catalog.Output {
	var owned []catalog.Output
	for _, o := range outputs {
		// A reserved path cannot be in a valid catalog; never select one.
		if o.Owner() == owner && !cleanpath.HasReservedSegment(o.Path) {
			owned = append(owned, o)
		}
	}
	sort.SliceStable(owned, func(i, j int) bool {
		a, b := owned[i], owned[j]
		if !a.UpdatedAt.Equal(b.UpdatedAt) {
			return a.UpdatedAt.After(b.UpdatedAt)
		}
		return a.Path < b.Path
	})
	cutoff := now.Add(-olderThan)
	selected := []catalog.Output{}
	for i, o := range owned {
		if i < keepMin {
			continue
		}
		if o.UpdatedAt.Before(cutoff) {
			selected = append(selected, o)
		}
	}
	sort.Slice(selected, func(i, j int) bool { return selected[i].Path < selected[j].Path })
	return selected
}

// Prune deletes (with opts.Apply) or lists (dry run) the outputs of one
// pipeline/destination that its destination's retention.prune policy
// selects. Under the root's lock it journals the deletes, deletes the files
// one by one, removes from the catalog exactly the records of files whose
// deletion succeeded, writes the catalog with compare-and-swap and drops the
// journal. It never touches unmanaged files, other owners' outputs or the
// catalog file itself.
//
// The returned error is for invalid options (*UsageError) and a destination
// without a prune policy (*ConfigError), or an unreadable --source manifest;
// everything after the root is resolved, including failures, is in the
// report.
func (a *App) Prune(ctx context.Context, cfg *config.Config, opts PruneOptions) (*report.Prune, error) {
	t, err := resolveMaint(cfg, "prune", opts.MaintOptions)
	if err != nil {
		return nil, err
	}
	if t.dest.Retention == nil || t.dest.Retention.Prune == nil {
		return nil, &ConfigError{fmt.Sprintf(
			"destination %q (%s:%d) has no retention.prune policy: add retention: {prune: {older_than: 30d, keep_min: 5}} to say what prune may delete",
			t.dest.ID, cfg.File, t.dest.Line)}
	}
	pol := t.dest.Retention.Prune
	now := a.Now()
	rep := &report.Prune{Command: "prune", PipelineID: t.owner.PipelineID, DestinationID: t.owner.DestinationID,
		Root: t.root, DryRun: !opts.Apply,
		Policy: report.PrunePolicy{OlderThan: FormatRetention(pol.OlderThan), KeepMin: pol.KeepMin,
			Cutoff: catalog.FormatTime(now.Add(-pol.OlderThan))},
		Selected: []report.PruneEntry{}, Deleted: []report.PruneEntry{}}
	fail := func(err error) (*report.Prune, error) {
		rep.Error = report.Str(err.Error())
		a.Logger.Error("prune failed", "pipeline", t.owner.PipelineID, "destination", t.owner.DestinationID, "err", err)
		return rep, nil
	}
	m, err := a.openMaintRoot(ctx, t, "prune", opts.Apply)
	if err != nil {
		return fail(err)
	}
	defer m.close()
	st, r := m.store, m.root
	rep.Root = st.String()
	rep.State = string(r.State.Status)
	rep.Warnings = m.warnings
	if err := refuseState("prune", rep.Root, r.State); err != nil {
		return fail(err)
	}
	if r.State.Status == catalog.StatusNone {
		return rep, nil // nothing is managed here: nothing to prune
	}
	c := r.State.Catalog
	for i := range c.Outputs {
		if c.Outputs[i].Owner() == t.owner {
			rep.Owned++
		}
	}
	selected := SelectPrune(c.Outputs, t.owner, now, pol.OlderThan, pol.KeepMin)
	for _, o := range selected {
		rep.Selected = append(rep.Selected, pruneEntry(&o))
	}
	if !opts.Apply || len(selected) == 0 {
		return rep, nil
	}
	// The intent journal lets the next writer on this root (run, prune
	// --apply, reconcile-state) drop the records of files deleted here if
	// this process dies before the catalog is written.
	if err := a.writePruneJournal(ctx, st, r.Version, now, selected); err != nil {
		return fail(fmt.Errorf("nothing was deleted: %w", err))
	}
	deleted, delErr := a.deleteSelected(ctx, st, selected)
	if len(deleted) > 0 {
		drop := make(map[string]bool, len(deleted))
		for _, o := range deleted {
			drop[o.Path] = true
		}
		// A cancelled prune still records what it deleted.
		wctx := context.WithoutCancel(ctx)
		if err := a.writeMaintCatalog(wctx, st, withoutPaths(c, drop), r.Version); err != nil {
			paths := make([]string, len(deleted))
			for i, o := range deleted {
				paths[i] = o.Path
			}
			return fail(errors.Join(delErr, fmt.Errorf(
				"%w; %d file(s) were deleted but their records remain (%s); the root keeps its intent journal, "+
					"so the next run, prune --apply or reconcile-state on this destination drops them",
				err, len(deleted), strings.Join(paths, ", "))))
		}
		for _, o := range deleted {
			rep.Deleted = append(rep.Deleted, pruneEntry(&o))
		}
	}
	a.dropPruneJournal(ctx, st)
	if delErr != nil {
		return fail(fmt.Errorf("%w (%d of %d selected output(s) were deleted and their records removed; the others are still managed)",
			delErr, len(deleted), len(selected)))
	}
	return rep, nil
}

// deleteSelected deletes the selected outputs one by one and returns those
// whose deletion succeeded. It stops at the first failure (or cancellation)
// and returns it.
func (a *App) deleteSelected(ctx context.Context, st storage.Store, selected []catalog.Output) ([]catalog.Output, error) {
	var deleted []catalog.Output
	for _, o := range selected {
		if err := ctx.Err(); err != nil {
			return deleted, fmt.Errorf("prune interrupted before %s: %w", o.Path, err)
		}
		if err := st.Delete(ctx, o.Path); err != nil {
			return deleted, fmt.Errorf("delete %s: %w", o.Path, err)
		}
		a.Logger.Info("pruned", "path", o.Path, "updated_at", catalog.FormatTime(o.UpdatedAt))
		deleted = append(deleted, o)
	}
	return deleted, nil
}

// writePruneJournal records the deletes prune is about to make, before
// the first one.
func (a *App) writePruneJournal(ctx context.Context, st storage.Store, base storage.Version, now time.Time, selected []catalog.Output) error {
	j := &journal.Journal{RunID: runID(), Command: "prune", Started: now.UTC().Truncate(time.Second), BaseVersion: string(base)}
	for _, o := range selected {
		j.Ops = append(j.Ops, journal.Op{Op: journal.OpDelete, Path: o.Path})
	}
	data, err := journal.Encode(j)
	if err != nil {
		return err
	}
	if _, err := st.PutIf(ctx, journal.Name, data, ""); err != nil {
		return fmt.Errorf("write %s: %w", journal.Name, err)
	}
	return nil
}

// dropPruneJournal removes the journal once the catalog records what
// happened. If that fails, the next writer finds the catalog committed and
// only removes the journal.
func (a *App) dropPruneJournal(ctx context.Context, st storage.Store) {
	if err := st.Delete(context.WithoutCancel(ctx), journal.Name); err != nil {
		a.Logger.Warn("remove journal", "root", st.String(), "err", err)
	}
}

func pruneEntry(o *catalog.Output) report.PruneEntry {
	return report.PruneEntry{Path: o.Path, UpdatedAt: catalog.FormatTime(o.UpdatedAt)}
}

// FormatRetention writes a retention duration the way the configuration
// does: days, hours, minutes and seconds, largest first, zero units left out
// ("30d", "1d12h", "90m" as "1h30m"). Sub-second parts are dropped.
func FormatRetention(d time.Duration) string {
	if d < time.Second {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		name string
		size time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if n := d / u.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.size
		}
	}
	return b.String()
}
