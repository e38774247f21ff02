package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRewrite: run --rewrite turns unchanged and record-only items into
// overwrites (so response metadata is applied again), keeps an unchanged
// record's timestamps, and so never plans skip_same.
func TestRewrite(t *testing.T) {
	base := cat(rec("b.txt", me, newSrc, 2, 20), rec("c.txt", me, oldSrc, 3, 30), rec("e.txt", me, newSrc, 6, 60))
	listing := map[string]int64{"b.txt": 20, "c.txt": 30, "e.txt": 60}
	for _, tc := range []struct {
		workflow string
		outs     []Output
		action   Action
		ops      map[string]Op
	}{
		{Additive, []Output{out("b.txt", 2, 20), out("c.txt", 3, 30), out("d.txt", 4, 40)}, UpsertAdditive,
			map[string]Op{"b.txt": OpOverwrite, "c.txt": OpOverwrite, "d.txt": OpCreate}},
		{Additive, []Output{out("b.txt", 2, 20), out("e.txt", 6, 60)}, UpsertAdditive, // would be skip_same
			map[string]Op{"b.txt": OpOverwrite, "e.txt": OpOverwrite}},
		{Replacement, []Output{out("b.txt", 2, 20)}, ReplaceCatalog,
			map[string]Op{"b.txt": OpOverwrite, "c.txt": OpDelete, "e.txt": OpDelete}},
	} {
		in := input(base, listing, tc.workflow, tc.outs...)
		in.Rewrite = true
		p, err := Make(in)
		if err != nil {
			t.Fatal(err)
		}
		if p.Action != tc.action {
			t.Errorf("%s %v: action %s, want %s", tc.workflow, tc.ops, p.Action, tc.action)
		}
		if diff := cmp.Diff(tc.ops, ops(p)); diff != "" {
			t.Errorf("ops (-want +got):\n%s", diff)
		}
		for _, it := range p.Items {
			if want := it.Path == "b.txt" || it.Path == "c.txt" && it.Op == OpOverwrite || it.Path == "e.txt" && it.Op == OpOverwrite; it.Rewrite != want {
				t.Errorf("%s: Rewrite %v, want %v", it.Path, it.Rewrite, want)
			}
		}
		idx := resulting(t, in, p.Edit).Index()
		if r := idx["b.txt"]; !r.UpdatedAt.Equal(t0) || !r.CreatedAt.Equal(t0) {
			t.Errorf("rewritten unchanged b.txt: created %s updated %s, want both %s", r.CreatedAt, r.UpdatedAt, t0)
		}
		if r := idx["c.txt"]; tc.ops["c.txt"] == OpOverwrite && (!r.UpdatedAt.Equal(now) || r.Source != newSrc) {
			t.Errorf("rewritten record-only c.txt: updated %s source %v, want %s and the new source", r.UpdatedAt, r.Source, now)
		}
	}
	// Without Rewrite the second case is skip_same.
	if p, _ := Make(input(base, listing, Additive, out("b.txt", 2, 20), out("e.txt", 6, 60))); p.Action != SkipSame {
		t.Errorf("without rewrite: %s", p.Action)
	}
}
