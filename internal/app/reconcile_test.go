package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/app"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// mtRemoveByHand deletes files of the standard root the way an operator
// would: behind distributor's back.
func (f *mtFixture) mtRemoveByHand(paths ...string) {
	f.t.Helper()
	for _, p := range paths {
		if err := os.Remove(filepath.Join(f.root, filepath.FromSlash(p))); err != nil {
			f.t.Fatal(err)
		}
	}
}

func mtRecordPaths(rs []report.Record) []string {
	var ps []string
	for _, r := range rs {
		ps = append(ps, r.Path+"@"+r.PipelineID+"/"+r.DestinationID)
	}
	return ps
}

func TestReconcileDryRunLeavesCatalogByteIdentical(t *testing.T) {
	f := newMT(t)
	f.mtStandard()
	f.mtRemoveByHand("alpha/mid.txt", "beta/fresh.txt")
	// Reserved names are never reported as unmanaged.
	mtWrite(t, f.root, ".distributor.lock", "held")
	mtWrite(t, f.root, "alpha/.distributor-journal", "x")
	before := storagetest.DirSnapshot(t, f.root)
	for _, all := range []bool{false, true} {
		rep, err := f.app().ReconcileState(context.Background(), f.cfg,
			app.ReconcileOptions{Root: mtOpts(alphaA), DryRun: true, AllOwners: all})
		if err != nil || rep.Failed() {
			t.Fatalf("%+v %v", rep, err)
		}
		want := []string{"alpha/mid.txt@alpha/shared-a"}
		if all {
			want = append(want, "beta/fresh.txt@beta/shared-b")
		}
		mtEqual(t, "missing", mtRecordPaths(rep.Missing), want)
		if len(rep.Removed) != 0 {
			t.Errorf("dry run removed %v", rep.Removed)
		}
		// Compared against every record: beta's files are not unmanaged,
		// even in the scoped run.
		mtEqual(t, "unmanaged", rep.Unmanaged, []string{"alpha/stray.txt", "hand.txt"})
		mtSameSnapshot(t, before, storagetest.DirSnapshot(t, f.root))
	}
}

func TestReconcileScoped(t *testing.T) {
	f := newMT(t)
	f.mtStandard()
	f.mtRemoveByHand("alpha/mid.txt", "beta/fresh.txt")
	before := storagetest.DirSnapshot(t, f.root)
	rep, err := f.app().ReconcileState(context.Background(), f.cfg, app.ReconcileOptions{Root: mtOpts(alphaA)})
	if err != nil || rep.Failed() {
		t.Fatalf("%+v %v %v", rep, err, mtDeref(rep.Error))
	}
	if rep.Checked != 5 {
		t.Errorf("checked %d records, want alpha's 5", rep.Checked)
	}
	mtEqual(t, "removed", mtRecordPaths(rep.Removed), []string{"alpha/mid.txt@alpha/shared-a"})
	after := storagetest.DirSnapshot(t, f.root)
	for p := range before {
		if p != catalog.FileName && after[p] != before[p] {
			t.Errorf("%s was touched", p)
		}
	}
	if len(after) != len(before) {
		t.Errorf("files before %d, after %d", len(before), len(after))
	}
	// beta's record of its missing file stays: the scoped run does not touch it.
	st := mtReadCatalog(t, f.root)
	idx := st.Index()
	if idx["alpha/mid.txt"] != nil || idx["beta/fresh.txt"] == nil || len(st.Outputs) != 6 {
		t.Errorf("records after scoped reconcile: %v", mtPaths(st))
	}
	if !st.UpdatedAt.Equal(mtNow) {
		t.Errorf("updated_at %v", st.UpdatedAt)
	}
}

func TestReconcileAllOwnersMakesCatalogTruthful(t *testing.T) {
	f := newMT(t)
	f.mtStandard()
	f.mtRemoveByHand("alpha/mid.txt", "beta/fresh.txt")
	rep, err := f.app().ReconcileState(context.Background(), f.cfg,
		app.ReconcileOptions{Root: mtOpts(betaB), AllOwners: true})
	if err != nil || rep.Failed() {
		t.Fatalf("%+v %v", rep, err)
	}
	mtEqual(t, "removed", mtRecordPaths(rep.Removed), []string{"alpha/mid.txt@alpha/shared-a", "beta/fresh.txt@beta/shared-b"})
	c := mtCatalog(t, f.root) // truthful
	if len(c.Outputs) != 5 {
		t.Errorf("records %v", mtPaths(c))
	}
	if !mtExists(t, f.root, "hand.txt") || !mtExists(t, f.root, "alpha/stray.txt") {
		t.Error("unmanaged files must stay")
	}
	if c.Index()["hand.txt"] != nil {
		t.Error("reconcile adopted an unmanaged file")
	}
	// Nothing missing any more: no rewrite.
	before := storagetest.DirSnapshot(t, f.root)
	rep, err = f.app().ReconcileState(context.Background(), f.cfg,
		app.ReconcileOptions{Root: mtOpts(betaB), AllOwners: true})
	if err != nil || rep.Failed() || len(rep.Missing) != 0 {
		t.Fatalf("%+v %v", rep, err)
	}
	mtSameSnapshot(t, before, storagetest.DirSnapshot(t, f.root))
}

func TestReconcileChecksNoDigest(t *testing.T) {
	f := newMT(t)
	f.mtStandard()
	mtWrite(t, f.root, "alpha/new.txt", "changed by hand")
	before := storagetest.DirSnapshot(t, f.root)
	rep, err := f.app().ReconcileState(context.Background(), f.cfg, app.ReconcileOptions{Root: mtOpts(alphaA)})
	if err != nil || rep.Failed() || len(rep.Missing) != 0 {
		t.Fatalf("%+v %v", rep, err)
	}
	mtSameSnapshot(t, before, storagetest.DirSnapshot(t, f.root))
}

func TestReconcileStates(t *testing.T) {
	f := newMT(t)
	ctx := context.Background()
	mtWrite(t, f.root, "a.txt", "a")
	// none: every file is unmanaged; no catalog is created.
	rep, err := f.app().ReconcileState(ctx, f.cfg, app.ReconcileOptions{Root: mtOpts(alphaA)})
	if err != nil || rep.Failed() || rep.State != "none" {
		t.Fatalf("none: %+v %v", rep, err)
	}
	mtEqual(t, "unmanaged", rep.Unmanaged, []string{"a.txt"})
	if mtExists(t, f.root, catalog.FileName) {
		t.Error("reconcile created a catalog")
	}
	for name, doc := range map[string]string{
		"legacy":  `{"schema_version": 3, "outputs": []}`,
		"invalid": `not json`,
		"future":  `{"schema_version": 5}`,
	} {
		for _, dry := range []bool{true, false} {
			mtWrite(t, f.root, catalog.FileName, doc)
			before := storagetest.DirSnapshot(t, f.root)
			rep, err := f.app().ReconcileState(ctx, f.cfg, app.ReconcileOptions{Root: mtOpts(alphaA), DryRun: dry})
			if err != nil || !rep.Failed() || rep.State != name || !strings.Contains(*rep.Error, name+" state") {
				t.Errorf("%s: %+v %v %v", name, rep, err, mtDeref(rep.Error))
			}
			mtSameSnapshot(t, before, storagetest.DirSnapshot(t, f.root))
		}
	}
}

// mtReadCatalog reads the root's catalog without checking truthfulness.
func mtReadCatalog(t *testing.T, root string) *catalog.Catalog {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, catalog.FileName))
	if err != nil {
		t.Fatal(err)
	}
	s := catalog.Read(data)
	if s.Status != catalog.StatusCatalog {
		t.Fatalf("state %s: %v", s.Status, s.Problem)
	}
	return s.Catalog
}
