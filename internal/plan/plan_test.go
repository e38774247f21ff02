package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/catalog/catalogtest"
)

var (
	t0  = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	now = time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	me  = catalog.Owner{PipelineID: "weather.daily", DestinationID: "latest"}
	you = catalog.Owner{PipelineID: "other", DestinationID: "latest"}

	oldSrc = catalog.Source{ID: "weather.tomorrow", Digest: digest("old"), Created: t0}
	newSrc = catalog.Source{ID: "weather.tomorrow", Digest: digest("new"), Created: now.Add(-time.Hour)}
)

func digest(s string) string {
	return "sha256:" + strings.Repeat(fmt.Sprintf("%x", len(s)%16), 64-len(s)) + fmt.Sprintf("%x", s)[:len(s)]
}

func h(n int) string { return fmt.Sprintf("sha256:%064x", n) }

func out(path string, hash int, size int64) Output {
	return Output{Path: path, Kind: catalog.KindSource, SourcePath: path, SHA256: h(hash), Size: size}
}

func rec(path string, owner catalog.Owner, src catalog.Source, hash int, size int64) catalog.Output {
	return catalog.Output{Path: path, PipelineID: owner.PipelineID, DestinationID: owner.DestinationID, Source: src,
		Kind: catalog.KindSource, SHA256: h(hash), Size: size, CreatedAt: t0, UpdatedAt: t0}
}

func cat(recs ...catalog.Output) catalog.State {
	return catalog.State{Status: catalog.StatusCatalog, SchemaVersion: 4,
		Catalog: &catalog.Catalog{SchemaVersion: 4, CreatedAt: t0, UpdatedAt: t0, Outputs: recs}}
}

func input(state catalog.State, listing map[string]int64, workflow string, outs ...Output) Input {
	return Input{Owner: me, Source: newSrc, Outputs: outs, State: state, Listing: listing, Workflow: workflow,
		Now: now, DistributorVersion: "test"}
}

func ops(p *Plan) map[string]Op {
	m := map[string]Op{}
	for _, it := range p.Items {
		m[it.Path] = it.Op
	}
	return m
}

// actionCase is an input to plan, with the plan it must make.
type actionCase struct {
	name      string
	in        Input
	action    Action
	ops       map[string]Op
	unmanaged []string
	retained  int
	catalog   bool
}

// TestActions runs the cases of each topic in turn: roots without a
// catalog and unmanaged collisions, updates of a catalog root, then
// invalid, future and legacy state and --force.
func TestActions(t *testing.T) {
	// b.txt is owned by me with the same bytes but an old source identity.
	base := cat(rec("a.html", me, newSrc, 1, 10), rec("b.txt", me, oldSrc, 2, 20), rec("z.txt", you, oldSrc, 9, 90))
	full := map[string]int64{"a.html": 10, "b.txt": 20, "z.txt": 90}
	cases := slices.Concat(actionNewRootCases(base), actionCatalogRootCases(base, full), actionOtherStateCases(base, full))
	seen := map[Action]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Make(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			seen[p.Action] = true
			if p.Action != tc.action {
				t.Fatalf("action %s (%s), want %s", p.Action, p.Reason, tc.action)
			}
			if diff := cmp.Diff(tc.ops, ops(p)); diff != "" {
				t.Errorf("ops (-want +got):\n%s", diff)
			}
			if tc.unmanaged != nil {
				if diff := cmp.Diff(tc.unmanaged, p.Unmanaged); diff != "" {
					t.Errorf("unmanaged (-want +got):\n%s", diff)
				}
			}
			if p.Retained != tc.retained {
				t.Errorf("retained %d, want %d", p.Retained, tc.retained)
			}
			if (p.Edit != nil) != tc.catalog {
				t.Errorf("catalog to write: %v, want %v", p.Edit != nil, tc.catalog)
			}
			if p.Edit != nil {
				if err := catalog.Validate(resulting(t, tc.in, p.Edit)); err != nil {
					t.Errorf("planned catalog is invalid: %v", err)
				}
				checkCatalogMatchesItems(t, tc.in, p)
			}
			checkStreamingPlanAgrees(t, tc.in, p)
			if p.Action.Failed() && p.Reason == "" {
				t.Errorf("fail action without a reason")
			}
		})
	}
	for _, a := range Actions {
		if !seen[a] {
			t.Errorf("no case covers action %s", a)
		}
	}
}

// actionNewRootCases: publish_new, the fail_unmanaged collisions, and what
// is no collision.
func actionNewRootCases(base catalog.State) []actionCase {
	return []actionCase{
		{
			name:   "publish_new into empty root",
			in:     input(catalog.State{Status: catalog.StatusNone}, nil, Additive, out("a.html", 1, 10)),
			action: PublishNew, ops: map[string]Op{"a.html": OpCreate}, unmanaged: []string{}, catalog: true,
		},
		{
			name:   "publish_new reports non-colliding unmanaged content",
			in:     input(catalog.State{Status: catalog.StatusNone}, map[string]int64{"keep.txt": 1, ".distributor.lock": 5}, Additive, out("a.html", 1, 10)),
			action: PublishNew, ops: map[string]Op{"a.html": OpCreate}, unmanaged: []string{"keep.txt"}, catalog: true,
		},
		{
			name:   "fail_unmanaged when a planned path exists without state",
			in:     input(catalog.State{Status: catalog.StatusNone}, map[string]int64{"a.html": 3}, Additive, out("a.html", 1, 10), out("b.txt", 2, 20)),
			action: FailUnmanaged, ops: map[string]Op{"a.html": OpOverwrite, "b.txt": OpCreate}, unmanaged: []string{"a.html"},
		},
		{
			name:   "fail_unmanaged when a planned path exists unrecorded in a catalog root",
			in:     input(base, map[string]int64{"a.html": 10, "b.txt": 20, "z.txt": 90, "new.txt": 4}, Additive, out("new.txt", 3, 30)),
			action: FailUnmanaged, ops: map[string]Op{"new.txt": OpOverwrite}, unmanaged: []string{"new.txt"},
		},
		{
			name:   "fail_unmanaged when an unmanaged file sits where a directory is needed",
			in:     input(catalog.State{Status: catalog.StatusNone}, map[string]int64{"docs": 3}, Additive, out("docs/a.html", 1, 10)),
			action: FailUnmanaged, ops: map[string]Op{"docs/a.html": OpCreate}, unmanaged: []string{"docs/a.html"},
		},
		{
			name:   "fail_unmanaged when unmanaged files sit below a planned file",
			in:     input(catalog.State{Status: catalog.StatusNone}, map[string]int64{"a.html/x": 3}, Additive, out("a.html", 1, 10)),
			action: FailUnmanaged, ops: map[string]Op{"a.html": OpCreate}, unmanaged: []string{"a.html"},
		},
		{
			name:   "fail_unmanaged when an empty directory stands at a planned path",
			in:     input(catalog.State{Status: catalog.StatusNone}, map[string]int64{"data/sales.csv/": 0}, Additive, out("data/sales.csv", 1, 10)),
			action: FailUnmanaged, ops: map[string]Op{"data/sales.csv": OpCreate}, unmanaged: []string{"data/sales.csv"},
		},
		{
			name:   "fail_unmanaged when a directory stands at a planned path of a catalog root",
			in:     input(base, map[string]int64{"new.txt/": 0}, Additive, out("new.txt", 3, 30)),
			action: FailUnmanaged, ops: map[string]Op{"new.txt": OpCreate}, unmanaged: []string{"new.txt"},
		},
		{
			name:   "an empty directory where a directory is needed is no collision, and not reported",
			in:     input(catalog.State{Status: catalog.StatusNone}, map[string]int64{"img/": 0, "uploads/": 0}, Additive, out("img/chart.svg", 1, 10)),
			action: PublishNew, ops: map[string]Op{"img/chart.svg": OpCreate}, unmanaged: []string{}, catalog: true,
		},
		{
			name: "--force deletes no directory entry",
			in: func() Input {
				in := input(catalog.State{Status: catalog.StatusNone}, map[string]int64{"old/": 0, "x.txt": 2}, Additive, out("a.html", 1, 10))
				in.Force = true
				return in
			}(),
			action: ForceReplace, ops: map[string]Op{"a.html": OpCreate, "x.txt": OpDelete}, catalog: true,
		},
	}
}

// actionCatalogRootCases: skip_same, upsert_additive and replace_catalog
// in a catalog root, ownership moves and unmanaged content left alone.
func actionCatalogRootCases(base catalog.State, full map[string]int64) []actionCase {
	return []actionCase{
		{
			name:   "skip_same when every output is recorded, identical and present",
			in:     input(cat(rec("a.html", me, newSrc, 1, 10)), map[string]int64{"a.html": 10}, Additive, out("a.html", 1, 10)),
			action: SkipSame, ops: map[string]Op{"a.html": OpUnchanged}, unmanaged: []string{},
		},
		{
			name:   "skip_same in replacement when nothing of mine is omitted",
			in:     input(cat(rec("a.html", me, newSrc, 1, 10), rec("z.txt", you, oldSrc, 9, 90)), map[string]int64{"a.html": 10, "z.txt": 90}, Replacement, out("a.html", 1, 10)),
			action: SkipSame, ops: map[string]Op{"a.html": OpUnchanged}, unmanaged: []string{}, retained: 1,
		},
		{
			name:   "upsert_additive retains every other managed output",
			in:     input(base, full, Additive, out("a.html", 1, 10), out("c.txt", 3, 30)),
			action: UpsertAdditive, ops: map[string]Op{"a.html": OpUnchanged, "c.txt": OpCreate}, unmanaged: []string{}, retained: 2, catalog: true,
		},
		{
			name:   "upsert_additive overwrites changed bytes",
			in:     input(base, full, Additive, out("a.html", 4, 11)),
			action: UpsertAdditive, ops: map[string]Op{"a.html": OpOverwrite}, unmanaged: []string{}, retained: 2, catalog: true,
		},
		{
			name:   "same bytes, new source identity: record-only update",
			in:     input(base, full, Additive, out("b.txt", 2, 20)),
			action: UpsertAdditive, ops: map[string]Op{"b.txt": OpUpdate}, unmanaged: []string{}, retained: 2, catalog: true,
		},
		{
			name:   "recorded but missing in storage is written again",
			in:     input(base, map[string]int64{"b.txt": 20, "z.txt": 90}, Additive, out("a.html", 1, 10)),
			action: UpsertAdditive, ops: map[string]Op{"a.html": OpCreate}, unmanaged: []string{}, retained: 2, catalog: true,
		},
		{
			name:   "recorded but changed size in storage is overwritten",
			in:     input(base, map[string]int64{"a.html": 99, "b.txt": 20, "z.txt": 90}, Additive, out("a.html", 1, 10)),
			action: UpsertAdditive, ops: map[string]Op{"a.html": OpOverwrite}, unmanaged: []string{}, retained: 2, catalog: true,
		},
		{
			name:   "replace_catalog deletes only my omitted outputs",
			in:     input(base, full, Replacement, out("a.html", 1, 10)),
			action: ReplaceCatalog, ops: map[string]Op{"a.html": OpUnchanged, "b.txt": OpDelete}, unmanaged: []string{}, retained: 1, catalog: true,
		},
		{
			name:   "replacement with nothing of mine left deletes all of mine",
			in:     input(base, full, Replacement),
			action: ReplaceCatalog, ops: map[string]Op{"a.html": OpDelete, "b.txt": OpDelete}, unmanaged: []string{}, retained: 1, catalog: true,
		},
		{
			name:   "ownership move: another owner's path is overwritten without --force",
			in:     input(base, full, Additive, out("z.txt", 5, 50)),
			action: UpsertAdditive, ops: map[string]Op{"z.txt": OpOverwrite}, unmanaged: []string{}, retained: 2, catalog: true,
		},
		{
			name:   "ownership move with identical bytes is a record-only update",
			in:     input(base, full, Additive, out("z.txt", 9, 90)),
			action: UpsertAdditive, ops: map[string]Op{"z.txt": OpUpdate}, unmanaged: []string{}, retained: 2, catalog: true,
		},
		{
			name:   "unmanaged non-colliding content is reported and left alone",
			in:     input(base, map[string]int64{"a.html": 10, "b.txt": 20, "z.txt": 90, "hand.txt": 1, ".distributor.journal": 3}, Replacement, out("a.html", 1, 10), out("b.txt", 2, 20)),
			action: ReplaceCatalog, ops: map[string]Op{"a.html": OpUnchanged, "b.txt": OpUpdate}, unmanaged: []string{"hand.txt"}, retained: 1, catalog: true,
		},
	}
}

// actionOtherStateCases: fail_conflict on invalid or future state, legacy
// roots, and force_replace.
func actionOtherStateCases(base catalog.State, full map[string]int64) []actionCase {
	return []actionCase{
		{
			name:   "fail_conflict on invalid state",
			in:     input(catalog.State{Status: catalog.StatusInvalid, Problem: errors.New("not a JSON object")}, full, Additive, out("a.html", 1, 10)),
			action: FailConflict, ops: map[string]Op{"a.html": OpOverwrite}, unmanaged: []string{"b.txt", "z.txt"},
		},
		{
			name:   "fail_conflict on future state",
			in:     input(catalog.State{Status: catalog.StatusFuture, SchemaVersion: 5}, nil, Replacement, out("a.html", 1, 10)),
			action: FailConflict, ops: map[string]Op{"a.html": OpCreate}, unmanaged: []string{},
		},
		{
			name:   "legacy additive overwrites planned paths only, others become unmanaged",
			in:     input(catalog.State{Status: catalog.StatusLegacy, SchemaVersion: 2}, map[string]int64{"a.html": 3, "old.html": 4}, Additive, out("a.html", 1, 10), out("c.txt", 3, 30)),
			action: UpsertAdditive, ops: map[string]Op{"a.html": OpOverwrite, "c.txt": OpCreate}, unmanaged: []string{"old.html"}, catalog: true,
		},
		{
			name:   "legacy replacement clears the root",
			in:     input(catalog.State{Status: catalog.StatusLegacy, SchemaVersion: 3}, map[string]int64{"a.html": 3, "old.html": 4, "x/y": 1, ".distributor.json": 9}, Replacement, out("a.html", 1, 10)),
			action: ReplaceCatalog, ops: map[string]Op{"a.html": OpOverwrite, "old.html": OpDelete, "x/y": OpDelete}, catalog: true,
		},
		{
			name: "force_replace clears everything else under the root",
			in: func() Input {
				in := input(catalog.State{Status: catalog.StatusInvalid}, map[string]int64{"a.html": 3, "hand.txt": 4, ".distributor.json": 9, ".distributor.lock": 1}, Additive, out("a.html", 1, 10), out("c.txt", 3, 30))
				in.Force = true
				return in
			}(),
			action: ForceReplace, ops: map[string]Op{"a.html": OpOverwrite, "c.txt": OpCreate, "hand.txt": OpDelete}, catalog: true,
		},
		{
			name: "force_replace over a valid catalog deletes other owners too",
			in: func() Input {
				in := input(base, full, Additive, out("a.html", 1, 10))
				in.Force = true
				return in
			}(),
			action: ForceReplace, ops: map[string]Op{"a.html": OpOverwrite, "b.txt": OpDelete, "z.txt": OpDelete}, catalog: true,
		},
	}
}

// checkCatalogMatchesItems asserts the planned catalog records every planned
// output with the run's owner and source, drops deleted paths, and keeps
// every retained record untouched.
func checkCatalogMatchesItems(t *testing.T, in Input, p *Plan) {
	t.Helper()
	idx := resulting(t, in, p.Edit).Index()
	for _, it := range p.Items {
		r := idx[it.Path]
		if it.Op == OpDelete {
			if r != nil {
				t.Errorf("%s: deleted but still recorded", it.Path)
			}
			continue
		}
		if r == nil {
			t.Errorf("%s: planned but not recorded", it.Path)
			continue
		}
		if r.SHA256 != it.Output.SHA256 || r.Size != it.Output.Size {
			t.Errorf("%s: recorded %s/%d, planned %s/%d", it.Path, r.SHA256, r.Size, it.Output.SHA256, it.Output.Size)
		}
		if r.Owner() != in.Owner || r.Source != in.Source {
			t.Errorf("%s: recorded owner %v source %v, want %v %v", it.Path, r.Owner(), r.Source, in.Owner, in.Source)
		}
	}
	if in.State.Catalog != nil && p.Action != ForceReplace {
		planned := map[string]bool{}
		for _, it := range p.Items {
			planned[it.Path] = true
		}
		kept := 0
		for _, old := range in.State.Catalog.Outputs {
			if planned[old.Path] {
				continue
			}
			kept++
			if r := idx[old.Path]; r == nil || *r != old {
				t.Errorf("%s: retained record changed or lost: %+v", old.Path, r)
			}
		}
		if kept != p.Retained {
			t.Errorf("retained %d, counted %d", p.Retained, kept)
		}
	}
}

// resulting is the catalog an edit planned from in leaves.
func resulting(t *testing.T, in Input, e *catalog.Edit) *catalog.Catalog {
	t.Helper()
	var base *catalog.Catalog
	if in.State.Status == catalog.StatusCatalog {
		base = in.State.Catalog
	}
	c, err := catalogtest.Apply(base, e)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkStreamingPlanAgrees plans in again the way run does on a valid
// catalog: only the records Wants keeps, and a listing of only what
// Lookups asks for (taken from the full listing). Where storage agrees
// with the catalog, the decision, the items and the catalog to write must
// be the same; only the unmanaged entries seen may be fewer.
func checkStreamingPlanAgrees(t *testing.T, in Input, full *Plan) {
	t.Helper()
	if in.State.Status != catalog.StatusCatalog || in.Force {
		return
	}
	c := in.State.Catalog
	for _, rec := range c.Outputs {
		if size, ok := in.Listing[rec.Path]; !ok || size != rec.Size {
			return // storage disagrees with the catalog: trusting it differs by design
		}
	}
	keep := Wants(in.Outputs, in.Owner, in.Workflow)
	known := &Known{Header: c.Header(), Records: map[string]*catalog.Output{}, Count: len(c.Outputs)}
	for i := range c.Outputs {
		if keep(&c.Outputs[i]) {
			known.Records[c.Outputs[i].Path] = &c.Outputs[i]
		}
	}
	paths, parents := Lookups(in.Outputs, known)
	listing := map[string]int64{}
	for _, p := range paths {
		for e, size := range in.Listing {
			if e == p || strings.HasPrefix(e, p+"/") {
				listing[e] = size
			}
		}
	}
	for _, d := range parents {
		if size, ok := in.Listing[d]; ok {
			listing[d] = size
		}
	}
	s := in
	s.State = catalog.State{Status: catalog.StatusCatalog, SchemaVersion: 4}
	s.Known, s.Listing, s.Partial = known, listing, true
	p, err := Make(s)
	if err != nil {
		t.Fatal(err)
	}
	if p.Action != full.Action || p.Retained != full.Retained {
		t.Errorf("streaming plan: %s retained %d, full plan: %s retained %d", p.Action, p.Retained, full.Action, full.Retained)
	}
	if diff := cmp.Diff(ops(full), ops(p)); diff != "" {
		t.Errorf("streaming plan ops differ (-full +streaming):\n%s", diff)
	}
	if full.Action == FailUnmanaged {
		if diff := cmp.Diff(full.Unmanaged, p.Unmanaged); diff != "" {
			t.Errorf("streaming plan collisions differ (-full +streaming):\n%s", diff)
		}
	}
	if (p.Edit == nil) != (full.Edit == nil) {
		t.Fatalf("streaming edit %v, full edit %v", p.Edit != nil, full.Edit != nil)
	}
	if p.Edit != nil {
		if diff := cmp.Diff(resulting(t, in, full.Edit), resulting(t, in, p.Edit)); diff != "" {
			t.Errorf("streaming catalog differs (-full +streaming):\n%s", diff)
		}
	}
}

func TestTimestamps(t *testing.T) {
	base := cat(rec("a.html", you, oldSrc, 1, 10), rec("b.txt", me, newSrc, 2, 20), rec("c.txt", me, oldSrc, 3, 30))
	listing := map[string]int64{"a.html": 10, "b.txt": 20, "c.txt": 30}
	in := input(base, listing, Additive, out("a.html", 5, 50), out("b.txt", 2, 20), out("c.txt", 3, 30), out("d.txt", 4, 40))
	p, err := Make(in)
	if err != nil {
		t.Fatal(err)
	}
	next := resulting(t, in, p.Edit)
	idx := next.Index()
	check := func(path string, created, updated time.Time) {
		t.Helper()
		r := idx[path]
		if !r.CreatedAt.Equal(created) || !r.UpdatedAt.Equal(updated) {
			t.Errorf("%s: created %s updated %s, want %s %s", path, r.CreatedAt, r.UpdatedAt, created, updated)
		}
	}
	check("a.html", t0, now) // ownership move + overwrite: created_at kept
	check("b.txt", t0, t0)   // unchanged: updated_at kept
	check("c.txt", t0, now)  // record-only update: new updated_at
	check("d.txt", now, now) // new
	if !next.CreatedAt.Equal(t0) || !next.UpdatedAt.Equal(now) {
		t.Errorf("catalog created %s updated %s", next.CreatedAt, next.UpdatedAt)
	}
	if got := idx["a.html"].PipelineID; got != me.PipelineID {
		t.Errorf("ownership did not move: %s", got)
	}
	c := p.Counts()
	if c != (Counts{Created: 1, Overwritten: 1, Unchanged: 2, Deleted: 0, Retained: 0}) {
		t.Errorf("counts %+v", c)
	}
}

func TestMakeRejectsBadInput(t *testing.T) {
	none := catalog.State{Status: catalog.StatusNone}
	for name, in := range map[string]Input{
		"duplicate": input(none, nil, Additive, out("a", 1, 1), out("a", 2, 2)),
		"unclean":   input(none, nil, Additive, out("../a", 1, 1)),
		"reserved":  input(none, nil, Additive, out(".distributor.json", 1, 1)),
		"workflow":  input(none, nil, "mirror", out("a", 1, 1)),
	} {
		if _, err := Make(in); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestSettle(t *testing.T) {
	base := cat(rec("a.html", me, oldSrc, 1, 10), rec("b.txt", me, oldSrc, 2, 20))
	in := input(base, map[string]int64{"a.html": 10, "b.txt": 20}, Replacement, out("a.html", 7, 70), out("c.txt", 3, 30))
	p, err := Make(in)
	if err != nil {
		t.Fatal(err)
	}
	if Settle(in, p, nil) != nil {
		t.Error("nothing done must not rewrite state")
	}
	var overwrite Item
	for _, it := range p.Items {
		if it.Path == "a.html" {
			overwrite = it
		}
	}
	c := resulting(t, in, Settle(in, p, []Item{overwrite}))
	idx := c.Index()
	if idx["a.html"].SHA256 != h(7) || idx["b.txt"] == nil || idx["c.txt"] != nil {
		t.Errorf("settled catalog wrong: %+v", c.Outputs)
	}
}

func TestCheckForceRoot(t *testing.T) {
	for _, tc := range []struct {
		backend, root string
		ok            bool
	}{
		{"local", "/", false}, {"local", "/srv", false}, {"local", "/srv/", false}, {"local", "", false},
		{"local", "/srv/www", true}, {"local", "/srv/../www", false}, {"sftp", "/var", false}, {"sftp", "/var/www", true},
		{"s3", "", false}, {"s3", "/", false}, {"s3", "site", true},
	} {
		err := CheckForceRoot(tc.backend == "s3", tc.root)
		if (err == nil) != tc.ok {
			t.Errorf("%s %q: err %v, want ok=%v", tc.backend, tc.root, err, tc.ok)
		}
	}
}
