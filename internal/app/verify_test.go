package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/app"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

func TestVerifyDetectsModifiedAndMissing(t *testing.T) {
	f := newMT(t)
	f.mtStandard()
	ctx := context.Background()
	rep, err := f.app().Verify(ctx, f.cfg, app.VerifyOptions{Root: mtOpts(alphaA), AllOwners: true})
	if err != nil || rep.Failed() || rep.OK != 7 {
		t.Fatalf("intact root: %+v %v", rep, err)
	}
	mtWrite(t, f.root, "alpha/old1.txt", "OLD1") // same size, other bytes
	mtWrite(t, f.root, "beta/fresh.txt", "fresh and longer")
	f.mtRemoveByHand("alpha/new.txt")
	before := storagetest.DirSnapshot(t, f.root)

	rep, err = f.app().Verify(ctx, f.cfg, app.VerifyOptions{Root: mtOpts(alphaA)})
	if err != nil || !rep.Failed() || rep.Error != nil {
		t.Fatalf("scoped: %+v %v", rep, err)
	}
	if rep.OK != 3 {
		t.Errorf("ok %d, want 3", rep.OK)
	}
	mtEqual(t, "missing", mtRecordPaths(rep.Missing), []string{"alpha/new.txt@alpha/shared-a"})
	if len(rep.Corrupt) != 1 || rep.Corrupt[0].Path != "alpha/old1.txt" ||
		rep.Corrupt[0].Expected != mtSum("old1")+" (4 bytes)" || rep.Corrupt[0].Actual != mtSum("OLD1")+" (4 bytes)" ||
		rep.Corrupt[0].PipelineID != "alpha" {
		t.Errorf("corrupt %+v", rep.Corrupt)
	}

	rep, err = f.app().Verify(ctx, f.cfg, app.VerifyOptions{Root: mtOpts(betaB), AllOwners: true})
	if err != nil || !rep.Failed() {
		t.Fatalf("all owners: %+v %v", rep, err)
	}
	if rep.OK != 4 || len(rep.Missing) != 1 || len(rep.Corrupt) != 2 {
		t.Errorf("all owners: ok %d missing %v corrupt %v", rep.OK, rep.Missing, rep.Corrupt)
	}
	if rep.Corrupt[1].Actual != mtSum("fresh and longer")+" (16 bytes)" {
		t.Errorf("corrupt %+v", rep.Corrupt[1])
	}
	// Read-only.
	mtSameSnapshot(t, before, storagetest.DirSnapshot(t, f.root))
}

func TestVerifyStates(t *testing.T) {
	f := newMT(t)
	ctx := context.Background()
	rep, err := f.app().Verify(ctx, f.cfg, app.VerifyOptions{Root: mtOpts(alphaA)})
	// No catalog: a mistyped root must not look healthy.
	if err != nil || !rep.Failed() || rep.State != "none" || rep.OK != 0 || !strings.HasPrefix(mtDeref(rep.Error), "no catalog (.distributor.json) found at "+f.root+", which is empty or does not exist:") {
		t.Fatalf("none: %+v %v", rep, err)
	}
	mtWrite(t, f.root, catalog.FileName, `{"schema_version": 1}`)
	rep, err = f.app().Verify(ctx, f.cfg, app.VerifyOptions{Root: mtOpts(alphaA)})
	if err != nil || !rep.Failed() || !strings.Contains(mtDeref(rep.Error), "legacy state") {
		t.Fatalf("legacy: %+v %v", rep, err)
	}
}

func TestShowState(t *testing.T) {
	f := newMT(t)
	ctx := context.Background()
	s, err := f.app().ShowState(ctx, f.cfg, app.ShowOptions{Root: mtOpts(alphaA)})
	var raw strings.Builder
	if err != nil || s.State != "none" || s.Count != 0 || s.WriteRaw(&raw) != nil || raw.Len() != 0 {
		t.Fatalf("none: %+v %v", s, err)
	}
	f.mtStandard()
	s, err = f.app().ShowState(ctx, f.cfg, app.ShowOptions{Root: mtOpts(betaB)})
	if err != nil || s.State != "catalog" || s.Count != 7 {
		t.Fatalf("catalog: %+v %v", s, err)
	}
	defer s.Close()
	if err := s.WriteRaw(&raw); err != nil || raw.String() != storagetest.DirSnapshot(t, f.root)[catalog.FileName] {
		t.Errorf("WriteRaw does not write the stored document: %v", err)
	}
	for name, doc := range map[string]string{
		"legacy": `{"schema_version": 2}`, "invalid": `[]`, "future": `{"schema_version": 99}`,
	} {
		mtWrite(t, f.root, catalog.FileName, doc)
		_, err := f.app().ShowState(ctx, f.cfg, app.ShowOptions{Root: mtOpts(alphaA)})
		if err == nil || !strings.HasPrefix(err.Error(), "state "+name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestTemplatedPathNeedsSource(t *testing.T) {
	f := newMT(t)
	ctx := context.Background()
	arch := app.Root{Pipeline: "alpha", Destination: "arch"}
	_, err := f.app().Verify(ctx, f.cfg, app.VerifyOptions{Root: arch})
	var ue *app.UsageError
	if !mtIsUsage(err, &ue) || !strings.Contains(err.Error(), "--source") {
		t.Fatalf("without --source: %v, want a UsageError naming --source", err)
	}
	dir := f.mtSeal("bundle", time.Date(2026, 6, 19, 8, 0, 0, 0, time.UTC))
	day := filepath.Join(f.dir, "arch", "2026-06-19")
	f.populate(day, []mtRec{{"index.html", alphaA, "x", 30 * 24 * time.Hour}}, nil)
	arch.Source = dir
	rep, err := f.app().Verify(ctx, f.cfg, app.VerifyOptions{Root: arch, AllOwners: true})
	if err != nil || rep.Failed() || rep.OK != 1 || rep.Root != day {
		t.Fatalf("with --source: %+v %v", rep, err)
	}
	// The other maintenance commands resolve it the same way.
	pr, err := f.app().Prune(ctx, f.cfg, app.PruneOptions{Root: arch})
	if err != nil || pr.Root != day {
		t.Fatalf("prune: %+v %v", pr, err)
	}
	if _, err := f.app().ShowState(ctx, f.cfg, app.ShowOptions{Root: app.Root{Pipeline: "alpha", Destination: "arch"}}); !mtIsUsage(err, &ue) {
		t.Errorf("state show without --source: %v", err)
	}
	// A --source without a manifest is an error (not a usage error).
	arch.Source = f.dir
	if _, err := f.app().ReconcileState(ctx, f.cfg, app.ReconcileOptions{Root: arch}); err == nil || mtIsUsage(err, &ue) {
		t.Errorf("bad --source: %v", err)
	}
}

func mtIsUsage(err error, ue **app.UsageError) bool { return errors.As(err, ue) }
