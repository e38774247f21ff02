package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/app"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultstore"
)

// TestSelectPrune: the unit of retention is the publication (one owner's
// outputs under one source identity), selected whole or not at all.
func TestSelectPrune(t *testing.T) {
	day := 24 * time.Hour
	now := time.Date(2026, 6, 20, 12, 0, 0, 0, time.UTC)
	me := catalog.Owner{PipelineID: "p", DestinationID: "d"}
	other := catalog.Owner{PipelineID: "q", DestinationID: "d"}
	// rec is an output of publication id (created created days ago), last
	// updated age ago.
	rec := func(path string, o catalog.Owner, id string, created, age time.Duration) catalog.Output {
		return catalog.Output{Path: path, PipelineID: o.PipelineID, DestinationID: o.DestinationID,
			Source: catalog.Source{ID: id, Digest: "sha256:" + id, Created: now.Add(-created)}, UpdatedAt: now.Add(-age)}
	}
	tests := []struct {
		name      string
		outputs   []catalog.Output
		olderThan time.Duration
		keepMin   int
		want      []string // "id: path path", oldest publication first
	}{
		{name: "empty"},
		{name: "all young", olderThan: 10 * day,
			outputs: []catalog.Output{rec("a", me, "r1", day, day), rec("b", me, "r2", 9*day, 9*day)}},
		{name: "a publication is selected whole, paths sorted", olderThan: 10 * day,
			outputs: []catalog.Output{rec("r1/z", me, "r1", 20*day, 20*day), rec("r1/a", me, "r1", 20*day, 11*day), rec("r2/a", me, "r2", day, day)},
			want:    []string{"r1: r1/a r1/z"}},
		{name: "one young output keeps its whole publication", olderThan: 10 * day,
			outputs: []catalog.Output{rec("r1/old", me, "r1", 20*day, 20*day), rec("r1/young", me, "r1", 20*day, day)}},
		{name: "exactly at the cutoff is not older", olderThan: 10 * day,
			outputs: []catalog.Output{rec("edge", me, "r1", 10*day, 10*day), rec("past", me, "r2", 11*day, 10*day+time.Second)},
			want:    []string{"r2: past"}},
		{name: "keep_min counts publications, not files", olderThan: day, keepMin: 2,
			outputs: []catalog.Output{
				rec("r1/a", me, "r1", 5*day, 5*day), rec("r1/b", me, "r1", 5*day, 5*day),
				rec("r2/a", me, "r2", 4*day, 4*day), rec("r2/b", me, "r2", 4*day, 4*day), rec("r2/c", me, "r2", 4*day, 4*day),
				rec("r3/a", me, "r3", 3*day, 3*day), rec("r3/b", me, "r3", 3*day, 3*day),
				rec("r4/a", me, "r4", 2*day, 2*day), rec("r4/b", me, "r4", 2*day, 2*day), rec("r4/c", me, "r4", 2*day, 2*day)},
			want: []string{"r1: r1/a r1/b", "r2: r2/a r2/b r2/c"}},
		{name: "keep_min orders by source created, not by updated_at", olderThan: day, keepMin: 1,
			// r-new was created last but its outputs were rewritten long ago;
			// r-old was created first and updated recently, yet is old too.
			outputs: []catalog.Output{rec("new", me, "r-new", 2*day, 9*day), rec("old", me, "r-old", 8*day, 3*day)},
			want:    []string{"r-old: old"}},
		{name: "keep_min counts young publications too", olderThan: 10 * day, keepMin: 2,
			outputs: []catalog.Output{rec("young", me, "r3", day, day), rec("old1", me, "r2", 20*day, 20*day), rec("old2", me, "r1", 30*day, 30*day)},
			want:    []string{"r1: old2"}},
		{name: "keep_min larger than the publications selects nothing", olderThan: day, keepMin: 10,
			outputs: []catalog.Output{rec("a", me, "r1", 5*day, 5*day), rec("b", me, "r2", 4*day, 4*day)}},
		{name: "equal created: ties by id, the smaller id is newer", olderThan: day, keepMin: 1,
			outputs: []catalog.Output{rec("b", me, "rb", 5*day, 5*day), rec("a", me, "ra", 5*day, 5*day), rec("c", me, "rc", 5*day, 5*day)},
			want:    []string{"rc: c", "rb: b"}},
		{name: "same id, other digest is another publication", olderThan: day,
			outputs: []catalog.Output{rec("a", me, "r1", 5*day, 5*day),
				{Path: "b", PipelineID: "p", DestinationID: "d", Source: catalog.Source{ID: "r1", Digest: "sha256:other", Created: now.Add(-5 * day)}, UpdatedAt: now.Add(-5 * day)}},
			want: []string{"r1: a", "r1: b"}}, // "sha256:other" < "sha256:r1": b is the newer
		{name: "other owners never selected nor counted by keep_min", olderThan: day, keepMin: 1,
			outputs: []catalog.Output{rec("mine-old", me, "r2", 5*day, 5*day), rec("mine-older", me, "r1", 6*day, 6*day),
				rec("theirs-new", other, "r3", time.Hour, time.Hour), rec("theirs-old", other, "r0", 50*day, 50*day)},
			want: []string{"r1: mine-older"}},
		{name: "same pipeline, other destination is another owner", olderThan: day,
			outputs: []catalog.Output{rec("x", catalog.Owner{PipelineID: "p", DestinationID: "e"}, "r1", 5*day, 5*day)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]catalog.Output(nil), tt.outputs...)
			var got []string
			for _, p := range app.SelectPrune(tt.outputs, me, now, tt.olderThan, tt.keepMin) {
				line := p.Source.ID + ":"
				for _, o := range p.Outputs {
					if o.Source != p.Source {
						t.Errorf("publication %s holds %s of source %v", p.Source.ID, o.Path, o.Source)
					}
					line += " " + o.Path
				}
				got = append(got, line)
			}
			mtEqual(t, "selected", got, tt.want)
			for i := range in {
				if in[i] != tt.outputs[i] {
					t.Fatalf("SelectPrune modified its input at %d", i)
				}
			}
		})
	}
}

func TestFormatRetention(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * 24 * time.Hour: "30d", 36 * time.Hour: "1d12h", 90 * time.Minute: "1h30m", time.Second: "1s", 0: "0s",
	} {
		if got := app.FormatRetention(d); got != want {
			t.Errorf("FormatRetention(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestPruneDryRunChangesNothing(t *testing.T) {
	f := newMT(t)
	f.mtStandard()
	before := storagetest.DirSnapshot(t, f.root)
	rep, err := f.app().Prune(context.Background(), f.cfg, app.PruneOptions{Root: mtOpts(alphaA)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() || !rep.DryRun || rep.State != "catalog" || rep.Owned != 5 {
		t.Fatalf("report %+v", rep)
	}
	mtEqual(t, "selected", mtEntryPaths(rep.Selected), []string{"alpha/old2.txt", "alpha/old3.txt"})
	if len(rep.Deleted) != 0 {
		t.Errorf("dry run deleted %v", rep.Deleted)
	}
	if rep.Policy != (report.PrunePolicy{OlderThan: "10d", KeepMin: 3, Cutoff: "2026-06-10T12:00:00Z"}) {
		t.Errorf("policy %+v", rep.Policy)
	}
	if rep.Selected[0].UpdatedAt != "2026-05-21T12:00:00Z" {
		t.Errorf("updated_at %q", rep.Selected[0].UpdatedAt)
	}
	mtSameSnapshot(t, before, storagetest.DirSnapshot(t, f.root))
}

func TestPruneApply(t *testing.T) {
	f := newMT(t)
	f.mtStandard()
	before := storagetest.DirSnapshot(t, f.root)
	rep, err := f.app().Prune(context.Background(), f.cfg, app.PruneOptions{Root: mtOpts(alphaA), Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() || rep.DryRun {
		t.Fatalf("report %+v, error %v", rep, mtDeref(rep.Error))
	}
	mtEqual(t, "deleted", mtEntryPaths(rep.Deleted), []string{"alpha/old2.txt", "alpha/old3.txt"})
	after := storagetest.DirSnapshot(t, f.root)
	for p, content := range before {
		gone := p == "alpha/old2.txt" || p == "alpha/old3.txt"
		switch {
		case p == catalog.FileName:
		case gone && mtExists(t, f.root, p):
			t.Errorf("%s was not deleted", p)
		case !gone && after[p] != content:
			t.Errorf("%s was touched", p) // unmanaged, beta's (even the ancient one) and kept alpha outputs
		}
	}
	c := mtCatalog(t, f.root)
	mtEqual(t, "records", mtPaths(c), []string{"alpha/mid.txt", "alpha/new.txt", "alpha/old1.txt", "beta/ancient.txt", "beta/fresh.txt"})
	if !c.UpdatedAt.Equal(mtNow) {
		t.Errorf("catalog updated_at %v, want %v", c.UpdatedAt, mtNow)
	}
	// A second prune finds nothing and does not rewrite the catalog.
	before = storagetest.DirSnapshot(t, f.root)
	rep, err = f.app().Prune(context.Background(), f.cfg, app.PruneOptions{Root: mtOpts(alphaA), Apply: true})
	if err != nil || rep.Failed() || len(rep.Selected) != 0 {
		t.Fatalf("second prune: %+v %v", rep, err)
	}
	mtSameSnapshot(t, before, storagetest.DirSnapshot(t, f.root))
}

func TestPruneOtherOwner(t *testing.T) {
	f := newMT(t)
	f.mtStandard()
	rep, err := f.app().Prune(context.Background(), f.cfg, app.PruneOptions{Root: mtOpts(betaB), Apply: true})
	if err != nil || rep.Failed() {
		t.Fatalf("%+v %v", rep, err)
	}
	mtEqual(t, "deleted", mtEntryPaths(rep.Deleted), []string{"beta/ancient.txt"})
	c := mtCatalog(t, f.root)
	if len(c.Outputs) != 6 || !mtExists(t, f.root, "alpha/old3.txt") || !mtExists(t, f.root, "hand.txt") {
		t.Errorf("touched other owners or unmanaged files: %v", mtPaths(c))
	}
}

func TestPruneDeleteFailureRecordsWhatWasDeleted(t *testing.T) {
	f := newMT(t)
	f.mtStandard()
	a := f.app()
	var fs *faultstore.Store
	a.Open = mtStore(func(st storage.Store) storage.Store {
		// Lock traffic aside: 1 the journal, 2 and 3 the deletes. The second delete fails.
		fs = faultstore.New(st, 3, false)
		fs.Ignore = faultstore.IgnoreLock
		return fs
	})
	rep, err := a.Prune(context.Background(), f.cfg, app.PruneOptions{Root: mtOpts(alphaA), Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Failed() || !strings.Contains(*rep.Error, "delete alpha/old3.txt") {
		t.Fatalf("want a failure naming alpha/old3.txt, got %v", mtDeref(rep.Error))
	}
	mtEqual(t, "deleted", mtEntryPaths(rep.Deleted), []string{"alpha/old2.txt"})
	mtEqual(t, "storage calls", fs.Log(), []string{"putif " + journal.Name, "delete alpha/old2.txt", "delete alpha/old3.txt",
		"putif " + catalog.FileName, "delete " + journal.Name})
	c := mtCatalog(t, f.root)
	if idx := c.Index(); idx["alpha/old2.txt"] != nil || idx["alpha/old3.txt"] == nil {
		t.Errorf("records %v: want old2 removed, old3 kept", mtPaths(c))
	}
	if !mtExists(t, f.root, "alpha/old3.txt") {
		t.Error("old3 should still exist")
	}
}

// TestPruneDiesBeforeCatalog fails the catalog write, and then (sticky)
// every write after a delete, as a process that dies would: the root keeps
// its journal, and the next writer on the root makes the catalog truthful.
func TestPruneDiesBeforeCatalog(t *testing.T) {
	for _, failAt := range []int{3, 4} { // after the first delete; at the catalog write
		f := newMT(t)
		f.mtStandard()
		a := f.app()
		a.Open = mtStore(func(st storage.Store) storage.Store {
			fs := faultstore.New(st, failAt, true)
			fs.Ignore = faultstore.IgnoreLock
			return fs
		})
		rep, err := a.Prune(context.Background(), f.cfg, app.PruneOptions{Root: mtOpts(alphaA), Apply: true})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Failed() || len(rep.Deleted) != 0 || !strings.Contains(*rep.Error, "intent journal") {
			t.Fatalf("fail at %d: want a failure that names the journal and no deleted record, got %+v %v", failAt, rep, mtDeref(rep.Error))
		}
		if !mtExists(t, f.root, journal.Name) || mtExists(t, f.root, "alpha/old2.txt") {
			t.Fatalf("fail at %d: want old2 deleted and the journal left", failAt)
		}
		// Read-only commands do not recover; they warn.
		v, err := f.app().Verify(context.Background(), f.cfg, app.VerifyOptions{Root: mtOpts(alphaA)})
		if err != nil || len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], journal.Name) {
			t.Fatalf("verify after a dead prune: %+v %v", v, err)
		}
		// The next writer recovers: the catalog is truthful, the journal gone.
		rec, err := f.app().ReconcileState(context.Background(), f.cfg, app.ReconcileOptions{Root: mtOpts(betaB)})
		if err != nil || rec.Failed() {
			t.Fatalf("reconcile: %+v %v", rec, err)
		}
		c := mtCatalog(t, f.root)
		if c.Index()["alpha/old2.txt"] != nil || mtExists(t, f.root, journal.Name) {
			t.Errorf("fail at %d: after recovery records %v", failAt, mtPaths(c))
		}
	}
}

func TestPruneRefusals(t *testing.T) {
	f := newMT(t)
	ctx := context.Background()
	// Neither pipeline nor destination.
	_, err := f.app().Prune(ctx, f.cfg, app.PruneOptions{Apply: true})
	var ue *app.UsageError
	if !errors.As(err, &ue) {
		t.Errorf("no selector: %v, want a UsageError", err)
	}
	// A destination the pipeline does not publish to.
	_, err = f.app().Prune(ctx, f.cfg, app.PruneOptions{Root: app.Root{Pipeline: "alpha", Destination: "shared-b"}})
	if !errors.As(err, &ue) {
		t.Errorf("wrong destination: %v, want a UsageError", err)
	}
	// No policy: a configuration error.
	_, err = f.app().Prune(ctx, f.cfg, app.PruneOptions{Root: app.Root{Pipeline: "alpha", Destination: "nopolicy"}})
	var ce *app.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "retention.prune") {
		t.Errorf("no policy: %v, want a ConfigError naming retention.prune", err)
	}
}

func TestPruneStates(t *testing.T) {
	f := newMT(t)
	ctx := context.Background()
	// none: nothing to prune, nothing written.
	rep, err := f.app().Prune(ctx, f.cfg, app.PruneOptions{Root: mtOpts(alphaA), Apply: true})
	if err != nil || rep.Failed() || rep.State != "none" || len(rep.Selected) != 0 {
		t.Fatalf("none: %+v %v", rep, err)
	}
	if mtExists(t, f.root, catalog.FileName) {
		t.Error("prune created a catalog")
	}
	for name, doc := range map[string]string{
		"legacy":  `{"schema_version": 2}`,
		"invalid": `{"schema_version": 4}`,
		"future":  `{"schema_version": 9}`,
	} {
		mtWrite(t, f.root, catalog.FileName, doc)
		mtWrite(t, f.root, "a.txt", "a")
		before := storagetest.DirSnapshot(t, f.root)
		rep, err := f.app().Prune(ctx, f.cfg, app.PruneOptions{Root: mtOpts(alphaA), Apply: true})
		if err != nil || !rep.Failed() || rep.State != name || !strings.Contains(*rep.Error, name+" state") {
			t.Errorf("%s: %+v %v %v", name, rep, err, mtDeref(rep.Error))
		}
		mtSameSnapshot(t, before, storagetest.DirSnapshot(t, f.root))
	}
}

func mtEntryPaths(es []report.PruneEntry) []string {
	var ps []string
	for _, e := range es {
		ps = append(ps, e.Path)
	}
	return ps
}

func mtDeref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
