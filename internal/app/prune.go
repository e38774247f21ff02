package app

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/render"
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

// Publication is the unit of retention (spec section 7): the outputs one
// owner holds under one source identity (id, digest, created).
type Publication struct {
	Source catalog.Source
	// Outputs are the publication's records, sorted by path.
	Outputs []catalog.Output
}

// sourceKey identifies a source identity in maps.
func sourceKey(s catalog.Source) string {
	return s.ID + "\x00" + s.Digest + "\x00" + s.Created.UTC().Format(time.RFC3339Nano)
}

// newerSource orders source identities newest first: by created, latest
// first, then by id and digest, byte-wise ascending.
func newerSource(a, b catalog.Source) int {
	if c := b.Created.Compare(a.Created); c != 0 {
		return c
	}
	return cmp.Or(strings.Compare(a.ID, b.ID), strings.Compare(a.Digest, b.Digest))
}

// SelectPrune returns the publications of owner that the retention policy
// selects, oldest first (the reverse of newerSource). A publication is
// selected whole when every one of its outputs has an UpdatedAt strictly
// before now-olderThan, and never when it is among the owner's keepMin
// newest publications by source created (newerSource). Other owners'
// outputs are never selected, nor is a destination's archive index or feed
// (transform index or feed: rebuilt, they are not reports and do not count
// towards keepMin). It is a pure function: outputs is not modified.
func SelectPrune(outputs []catalog.Output, owner catalog.Owner, now time.Time, olderThan time.Duration, keepMin int) []Publication {
	byKey := map[string]*Publication{}
	var pubs []*Publication
	for _, o := range outputs {
		// A reserved path cannot be in a valid catalog; never select one.
		if o.Owner() != owner || cleanpath.HasReservedSegment(o.Path) ||
			o.Transform == catalog.TransformIndex || o.Transform == catalog.TransformFeed {
			continue
		}
		k := sourceKey(o.Source)
		p := byKey[k]
		if p == nil {
			p = &Publication{Source: o.Source}
			byKey[k] = p
			pubs = append(pubs, p)
		}
		p.Outputs = append(p.Outputs, o)
	}
	slices.SortFunc(pubs, func(a, b *Publication) int { return newerSource(a.Source, b.Source) })
	cutoff := now.Add(-olderThan)
	selected := []Publication{}
	for i, p := range pubs {
		if i < keepMin || slices.ContainsFunc(p.Outputs, func(o catalog.Output) bool { return !o.UpdatedAt.Before(cutoff) }) {
			continue
		}
		slices.SortFunc(p.Outputs, func(a, b catalog.Output) int { return strings.Compare(a.Path, b.Path) })
		selected = append(selected, *p)
	}
	slices.Reverse(selected)
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
		Publications: []report.PrunePublication{}, Selected: []report.PruneEntry{}, Deleted: []report.PruneEntry{}, Rebuilt: []string{}}
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
	pubs := SelectPrune(c.Outputs, t.owner, now, pol.OlderThan, pol.KeepMin)
	var paths []string
	for _, pub := range pubs {
		rep.Publications = append(rep.Publications, prunePublication(&pub))
		for i := range pub.Outputs {
			rep.Selected = append(rep.Selected, pruneEntry(&pub.Outputs[i]))
		}
	}
	slices.SortFunc(rep.Selected, func(a, b report.PruneEntry) int { return strings.Compare(a.Path, b.Path) })
	for _, s := range rep.Selected {
		paths = append(paths, s.Path)
	}
	if !opts.Apply || len(paths) == 0 {
		return rep, nil
	}
	writes, err := rebuildIndex(t.dest, c, paths, now)
	if err != nil {
		return fail(err)
	}
	// The transaction journals the deletes first, so that the next writer
	// on this root (run, prune --apply, reconcile-state) drops the records
	// of files deleted here if this process dies before the catalog is
	// written; after a failure it records exactly the deletes that happened.
	// It rewrites the archive index and feed before it deletes, so that they
	// never link a deleted publication.
	all := slices.Clone(paths)
	for _, w := range writes {
		all = append(all, w.Path)
	}
	res, err := m.tx.Apply(&txn.Change{Base: r.Version, Writes: writes, Deletes: paths,
		Final:   a.pruneEdit(c, writes, paths, all),
		Partial: func(done []string) *catalog.Edit { return a.pruneEdit(c, writes, paths, done) }})
	done := make(map[string]bool, len(res.Done))
	for _, p := range res.Done {
		done[p] = true
	}
	for _, s := range rep.Selected {
		if done[s.Path] {
			rep.Deleted = append(rep.Deleted, s)
			a.Logger.Info("pruned", "path", s.Path, "updated_at", s.UpdatedAt)
		}
	}
	for _, w := range writes {
		if done[w.Path] {
			rep.Rebuilt = append(rep.Rebuilt, w.Path)
		}
	}
	slices.Sort(rep.Rebuilt)
	if err != nil {
		return fail(fmt.Errorf("%w (%d of %d selected output(s) were deleted and their records removed; the others are still managed)",
			err, len(rep.Deleted), len(rep.Selected)))
	}
	return rep, nil
}

// pruneEdit is the catalog edit that records what of a prune took effect:
// the rewritten index and feed among done (their new records) and the
// deletes among done.
func (a *App) pruneEdit(c *catalog.Catalog, writes []txn.Write, deletes, done []string) *catalog.Edit {
	isDone := make(map[string]bool, len(done))
	for _, p := range done {
		isDone[p] = true
	}

	var gone []string
	for _, p := range deletes {
		if isDone[p] {
			gone = append(gone, p)
		}
	}
	e := a.dropping(c, gone)
	for _, w := range writes {
		if isDone[w.Path] {
			e.Put = append(e.Put, w.Record)
		}
	}
	return e
}

// rebuildIndex returns the writes that bring destination d's archive index
// and feed up to date with catalog c once the outputs at paths gone are
// deleted, each with its new record. Only an index or feed that c records
// as d's is rewritten (prune maintains what a run published; the next run
// creates a missing one), and only when its bytes change. The pages are
// the ones a run would write from the same catalog, so the next run over
// an unchanged root finds them skip_same.
func rebuildIndex(d *config.Destination, c *catalog.Catalog, gone []string, now time.Time) ([]txn.Write, error) {
	if d.Index == nil {
		return nil, nil
	}
	deleted := make(map[string]bool, len(gone))
	for _, p := range gone {
		deleted[p] = true
	}
	col := &reportCollector{dest: d.ID}
	recorded := map[string]*catalog.Output{}
	for i := range c.Outputs {
		o := &c.Outputs[i]
		if deleted[o.Path] {
			continue
		}
		if o.DestinationID == d.ID && (o.Path == d.Index.Path && o.Transform == catalog.TransformIndex ||
			o.Path == d.Index.Feed && o.Transform == catalog.TransformFeed) {
			recorded[o.Path] = o
		}
		col.visit(o)
	}
	if len(recorded) == 0 {
		return nil, nil
	}
	outs, err := render.Index(d, render.IndexEntries(d, col.records()))
	if err != nil {
		return nil, fmt.Errorf("rebuild the archive index of destination %q: %w", d.ID, err)
	}
	shape := webWrites(d, "")
	var writes []txn.Write
	for _, out := range outs {
		prev := recorded[out.Path]
		if prev == nil || prev.SHA256 == out.SHA256 && prev.Size == out.Size {
			continue
		}
		rec := *prev
		rec.SHA256, rec.Size, rec.URL, rec.UpdatedAt = out.SHA256, out.Size, out.URL, now.UTC().Truncate(time.Second)
		content := out.Content
		w := txn.Write{Path: out.Path, Existed: true, Previous: &txn.Digest{SHA256: prev.SHA256, Size: prev.Size},
			SHA256: out.SHA256, Size: out.Size, Record: rec,
			Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(content)), nil }}
		shape(&w)
		writes = append(writes, w)
	}
	return writes, nil
}

func prunePublication(p *Publication) report.PrunePublication {
	rp := report.PrunePublication{Source: report.PruneSource{ID: p.Source.ID, Digest: p.Source.Digest, Created: catalog.FormatTime(p.Source.Created)},
		Paths: make([]string, len(p.Outputs))}
	for i := range p.Outputs {
		rp.Paths[i] = p.Outputs[i].Path
		if u := catalog.FormatTime(p.Outputs[i].UpdatedAt); u > rp.UpdatedAt {
			rp.UpdatedAt = u
		}
	}
	return rp
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
