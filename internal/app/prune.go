package app

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/render"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// PruneOptions are the inputs of Prune.
type PruneOptions struct {
	Root
	// Apply deletes the selected publications (otherwise only listed).
	Apply  bool
	Logger *slog.Logger
	Tuning
}

func sourceKey(s catalog.Source) string {
	return s.ID + "\x00" + s.Digest + "\x00" + s.Created.UTC().Format(time.RFC3339Nano)
}

// selectPublications selects owner's publications the retention policy prunes,
// in two passes over each (memory follows publications, not outputs): summarise,
// then, if any was chosen, collect. A publication is selected whole when all
// its outputs' UpdatedAt are before now-olderThan, and never among the keepMin
// newest. Archive index and feed are never selected nor counted (rebuilt).
func selectPublications(each func(func(*catalog.Output) error) error, owner catalog.Owner, now time.Time, olderThan time.Duration, keepMin int) (*pruneSelection, error) {
	s := &pruneSelection{owner: owner, pubs: map[string]*pubSummary{}}
	if err := each(s.summarise); err != nil {
		return nil, err
	}
	pubs := slices.Collect(maps.Values(s.pubs))
	slices.SortFunc(pubs, func(a, b *pubSummary) int { // newest created first, then by id and digest
		x, y := a.source, b.source
		return cmp.Or(y.Created.Compare(x.Created), strings.Compare(x.ID, y.ID), strings.Compare(x.Digest, y.Digest))
	})
	for i, p := range pubs {
		if i >= keepMin && p.latest.Before(now.Add(-olderThan)) {
			p.selected = true
			s.chosen = append(s.chosen, p)
		}
	}
	slices.Reverse(s.chosen)
	if len(s.chosen) == 0 {
		return s, nil
	}
	return s, each(s.collect)
}

type pruneSelection struct {
	owner  catalog.Owner
	owned  int // the owner's outputs (every kind)
	pubs   map[string]*pubSummary
	chosen []*pubSummary // oldest first
}

// pubSummary is a publication, the unit of retention (spec section 7): the
// outputs one owner holds under one source identity (id, digest, created).
type pubSummary struct {
	source   catalog.Source
	latest   time.Time // the newest UpdatedAt of its outputs
	selected bool
	outputs  []catalog.Output // collected once selected
}

// counts says whether o belongs to one of the owner's publications (never a
// reserved path, which a valid catalog cannot hold).
func (s *pruneSelection) counts(o *catalog.Output) bool {
	return o.Owner() == s.owner && !cleanpath.HasReservedSegment(o.Path) &&
		o.Transform != catalog.TransformIndex && o.Transform != catalog.TransformFeed
}

func (s *pruneSelection) summarise(o *catalog.Output) error {
	if o.Owner() == s.owner {
		s.owned++
	}
	if !s.counts(o) {
		return nil
	}
	k := sourceKey(o.Source)
	if p := s.pubs[k]; p == nil {
		s.pubs[k] = &pubSummary{source: o.Source, latest: o.UpdatedAt}
	} else if o.UpdatedAt.After(p.latest) {
		p.latest = o.UpdatedAt
	}
	return nil
}

func (s *pruneSelection) selects(o *catalog.Output) bool {
	if !s.counts(o) {
		return false
	}
	p := s.pubs[sourceKey(o.Source)]
	return p != nil && p.selected
}

func (s *pruneSelection) collect(o *catalog.Output) error {
	if s.selects(o) {
		p := s.pubs[sourceKey(o.Source)]
		p.outputs = append(p.outputs, *o)
	}
	return nil
}

// Prune deletes (opts.Apply) or lists the outputs of one owner that its
// retention.prune policy selects, in one locked transaction: the catalog drops
// exactly the records of files deleted. The error is for invalid options, no
// prune policy (*ConfigError) or an unreadable --source; the rest is reported.
func (a *App) Prune(ctx context.Context, cfg *config.Config, opts PruneOptions) (*report.Prune, error) {
	t, err := resolveMaint(cfg, "prune", opts.Root)
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
	rep := &report.Prune{Target: t.head, DryRun: !opts.Apply,
		Policy: report.PrunePolicy{OlderThan: FormatRetention(pol.OlderThan), KeepMin: pol.KeepMin,
			Cutoff: catalog.FormatTime(now.Add(-pol.OlderThan))},
		Publications: []report.PrunePublication{}, Selected: []report.PruneEntry{}, Deleted: []report.PruneEntry{}, Rebuilt: []string{}}
	fail := func(err error) (*report.Prune, error) { a.maintFailed(&rep.Failure, t, err); return rep, nil }
	m, ctx, err := a.openMaintRoot(ctx, t, opts.Apply)
	if m != nil {
		defer m.close()
		rep.Root, rep.State, rep.Warnings, rep.RootRecovery = m.store.String(), string(m.state.Status), m.warnings, rootRecovery(m.tx)
	}
	if err != nil {
		return fail(err)
	}
	if m.cat == nil {
		return rep, nil // nothing is managed here: nothing to prune
	}
	sel, err := selectPublications(func(fn func(*catalog.Output) error) error { return m.cat.each(ctx, fn) },
		t.owner, now, pol.OlderThan, pol.KeepMin)
	if err != nil {
		return fail(err)
	}
	rep.Owned = sel.owned
	for _, pub := range sel.chosen { // oldest first, outputs by path
		slices.SortFunc(pub.outputs, func(a, b catalog.Output) int { return strings.Compare(a.Path, b.Path) })
		rp := report.PrunePublication{Paths: make([]string, len(pub.outputs)),
			Source: report.PruneSource{ID: pub.source.ID, Digest: pub.source.Digest, Created: catalog.FormatTime(pub.source.Created)}}
		for i, o := range pub.outputs {
			e := report.PruneEntry{Path: o.Path, UpdatedAt: catalog.FormatTime(o.UpdatedAt)}
			rp.Paths[i], rp.UpdatedAt = o.Path, max(rp.UpdatedAt, e.UpdatedAt)
			rep.Selected = append(rep.Selected, e)
		}
		rep.Publications = append(rep.Publications, rp)
	}
	slices.SortFunc(rep.Selected, func(a, b report.PruneEntry) int { return strings.Compare(a.Path, b.Path) })
	if !opts.Apply || len(rep.Selected) == 0 {
		return rep, nil
	}
	writes, err := rebuildIndex(ctx, t.dest, m.store.Properties(), m.cat, sel.selects, now)
	if err != nil {
		return fail(err)
	}
	// The transaction journals the deletes first (a writer after a crash
	// drops the records of files deleted here), and rewrites the archive
	// index and feed before it deletes, so that they never link a deleted
	// publication.
	var paths []string
	for _, s := range rep.Selected {
		paths = append(paths, s.Path)
	}
	// edit records what took effect (done; nil: all of it).
	h := m.cat.Header
	edit := func(done map[string]bool) *catalog.Edit {
		e := a.dropping(h, slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return done != nil && !done[p] }))
		for _, w := range writes {
			if done == nil || done[w.Path] {
				e.Put = append(e.Put, *w.Record)
			}
		}
		return e
	}
	ch := m.change()
	ch.Writes, ch.Deletes, ch.Final = writes, paths, edit(nil)
	ch.Partial = func(done []string) *catalog.Edit { return edit(setOf(done)) }
	res, err := m.tx.Apply(ch)
	done := setOf(res.Done)
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

func setOf(paths []string) map[string]bool {
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	return set
}

// rebuildIndex returns the writes that bring d's archive index and feed up to
// date with c without the outputs gone selects: only those c records as d's,
// only when their bytes change, as a run would write them (then skip_same).
func rebuildIndex(ctx context.Context, d *config.Destination, props storage.Properties, c *maintCatalog, gone func(*catalog.Output) bool, now time.Time) ([]txn.Write, error) {
	if d.Index == nil {
		return nil, nil
	}
	col := &reportCollector{dest: d.ID}
	recorded := map[string]*catalog.Output{}
	err := c.each(ctx, func(o *catalog.Output) error {
		if gone(o) {
			return nil
		}
		plain, sidecar := catalog.SidecarOf(o.Path, o.Transform)
		if o.DestinationID == d.ID && (o.Path == d.Index.Path && o.Transform == catalog.TransformIndex ||
			o.Path == d.Index.Feed && o.Transform == catalog.TransformFeed || sidecar && (plain == d.Index.Path || plain == d.Index.Feed)) {
			kept := *o
			recorded[o.Path] = &kept
		}
		col.visit(o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(recorded) == 0 {
		return nil, nil
	}
	outs, err := render.Index(d, render.IndexEntries(d, col.recs))
	if err == nil { // compressed as a run would: sidecars, or objects stored gzip
		outs, err = compressPlan(d.Compress, !props.Directories, outs)
	}
	var z compressed
	if err == nil {
		err = z.digest(ctx, plan.Input{}, outs, func(o *render.Output) (io.ReadCloser, error) { return openOutput(ctx, nil, o, &z) })
	}
	if err != nil {
		return nil, fmt.Errorf("rebuild the archive index of destination %q: %w", d.ID, err)
	}
	shape := webWrites(d, "", outs)
	var writes []txn.Write
	for _, out := range outs {
		prev := recorded[out.Path]
		if prev == nil || prev.SHA256 == out.SHA256 && prev.Size == out.Size {
			continue
		}
		rec := *prev
		rec.SHA256, rec.Size, rec.URL, rec.UpdatedAt = out.SHA256, out.Size, out.URL, now.UTC().Truncate(time.Second)
		w := txn.Write{Path: out.Path, Existed: true, Previous: &txn.Digest{SHA256: prev.SHA256, Size: prev.Size},
			SHA256: out.SHA256, Size: out.Size, Record: &rec,
			Open: func(ctx context.Context) (io.ReadCloser, error) { return openOutput(ctx, nil, &out, &z) }}
		shape(&w)
		writes = append(writes, w)
	}
	return writes, nil
}

// FormatRetention writes a duration as the configuration does ("30d",
// "1d12h", "1h30m"), dropping sub-second parts.
func FormatRetention(d time.Duration) string {
	if d < time.Second {
		return "0s"
	}
	var b strings.Builder
	for i, size := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if n := d / size; n > 0 {
			fmt.Fprintf(&b, "%d%c", n, "dhms"[i])
			d -= n * size
		}
	}
	return b.String()
}
