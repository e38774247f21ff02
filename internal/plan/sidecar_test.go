package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// sidecar is the record of P's sidecar for transform t, owned by owner.
func sidecar(p, t string, owner catalog.Owner, hash int) catalog.Output {
	r := rec(p+catalog.SidecarSuffix(t), owner, newSrc, hash, 5)
	r.Kind, r.SourcePath, r.Transform = catalog.KindGenerated, p, t
	return r
}

func sidecarOut(p, t string, hash int) Output {
	return Output{Path: p + catalog.SidecarSuffix(t), Kind: catalog.KindGenerated, SourcePath: p, Transform: t, SHA256: h(hash), Size: 5}
}

// TestSidecars: a sidecar is owned, replaced and deleted with its output
// (spec 3.4), whatever the workflow: one left beside a rewritten output
// would serve stale bytes.
func TestSidecars(t *testing.T) {
	base := cat(rec("a.html", me, newSrc, 1, 10), sidecar("a.html", catalog.TransformGzip, me, 2),
		sidecar("a.html", catalog.TransformBrotli, me, 3), rec("b.css", you, newSrc, 4, 10),
		sidecar("b.css", catalog.TransformGzip, you, 5), rec("c.txt.gz", me, newSrc, 6, 5))
	full := map[string]int64{"a.html": 10, "a.html.gz": 5, "a.html.br": 5, "b.css": 10, "b.css.gz": 5, "c.txt.gz": 5}
	for _, tc := range []struct {
		name   string
		in     Input
		action Action
		ops    map[string]Op
	}{
		{"unchanged output and sidecars: skip_same",
			input(base, full, Additive, out("a.html", 1, 10), sidecarOut("a.html", catalog.TransformGzip, 2), sidecarOut("a.html", catalog.TransformBrotli, 3)),
			SkipSame, map[string]Op{"a.html": OpUnchanged, "a.html.gz": OpUnchanged, "a.html.br": OpUnchanged}},
		{"a changed output rewrites its sidecars",
			input(base, full, Additive, out("a.html", 7, 10), sidecarOut("a.html", catalog.TransformGzip, 8), sidecarOut("a.html", catalog.TransformBrotli, 9)),
			UpsertAdditive, map[string]Op{"a.html": OpOverwrite, "a.html.gz": OpOverwrite, "a.html.br": OpOverwrite}},
		{"additive: the sidecar no longer planned is deleted with its output planned",
			input(base, full, Additive, out("a.html", 1, 10), sidecarOut("a.html", catalog.TransformGzip, 2)),
			UpsertAdditive, map[string]Op{"a.html": OpUnchanged, "a.html.gz": OpUnchanged, "a.html.br": OpDelete}},
		{"additive: another owner's output taken over loses its stale sidecar",
			input(base, full, Additive, out("b.css", 4, 10)),
			UpsertAdditive, map[string]Op{"b.css": OpUpdate, "b.css.gz": OpDelete}},
		{"replacement: a dropped output's sidecars go with it; a source file named like a sidecar is no sidecar",
			input(base, full, Replacement, out("c.txt.gz", 6, 5)),
			ReplaceCatalog, map[string]Op{"a.html": OpDelete, "a.html.gz": OpDelete, "a.html.br": OpDelete, "c.txt.gz": OpUnchanged}},
		{"additive: an output not planned keeps its sidecars",
			input(base, full, Additive, out("c.txt.gz", 6, 5)),
			SkipSame, map[string]Op{"c.txt.gz": OpUnchanged}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Make(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if p.Action != tc.action {
				t.Fatalf("action %s (%s), want %s", p.Action, p.Reason, tc.action)
			}
			if diff := cmp.Diff(tc.ops, ops(p)); diff != "" {
				t.Errorf("ops (-want +got):\n%s", diff)
			}
			if p.Edit != nil {
				if err := catalog.Validate(resulting(t, tc.in, p.Edit)); err != nil {
					t.Errorf("planned catalog is invalid: %v", err)
				}
				checkCatalogMatchesItems(t, tc.in, p)
			}
			checkStreamingPlanAgrees(t, tc.in, p)
		})
	}
}
