package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/txn"
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
// selected, nor is a destination's archive index or feed (transform index
// or feed: rebuilt by every run, they are not reports and do not count
// towards keepMin). It is a pure function: outputs is not modified.
func SelectPrune(outputs []catalog.Output, owner catalog.Owner, now time.Time, olderThan time.Duration, keepMin int) []catalog.Output {
	var owned []catalog.Output
	for _, o := range outputs {
		// A reserved path cannot be in a valid catalog; never select one.
		if o.Owner() == owner && !cleanpath.HasReservedSegment(o.Path) &&
			o.Transform != catalog.TransformIndex && o.Transform != catalog.TransformFeed {
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
		rep.Error, rep.ErrorDetail = report.Errors(err)
		rep.Cause = err
		a.logFailure("prune failed", t.owner, err)
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
	if err := refuseState("prune", rep.Root, t.owner, r.State); err != nil {
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
	// The transaction journals the deletes first, so that the next writer
	// on this root (run, prune --apply, reconcile-state) drops the records
	// of files deleted here if this process dies before the catalog is
	// written; after a failure it records exactly the deletes that happened.
	paths := make([]string, len(selected))
	for i, o := range selected {
		paths[i] = o.Path
	}
	res, err := m.tx.Apply(&txn.Change{Base: r.Version, Deletes: paths,
		Final:   a.dropping(c, paths),
		Partial: func(done []string) *catalog.Edit { return a.dropping(c, done) }})
	deleted := make(map[string]bool, len(res.Done))
	for _, p := range res.Done {
		deleted[p] = true
	}
	for _, o := range selected {
		if deleted[o.Path] {
			rep.Deleted = append(rep.Deleted, pruneEntry(&o))
			a.Logger.Info("pruned", "path", o.Path, "updated_at", catalog.FormatTime(o.UpdatedAt))
		}
	}
	if err != nil {
		return fail(fmt.Errorf("%w (%d of %d selected output(s) were deleted and their records removed; the others are still managed)",
			err, len(rep.Deleted), len(selected)))
	}
	return rep, nil
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
