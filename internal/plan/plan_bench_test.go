package plan_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/plan"
)

var (
	benchCreated = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	benchSource  = catalog.Source{ID: "bench.2026-06-01", Digest: "sha256:" + fmt.Sprintf("%064x", 1), Created: benchCreated}
	benchOwner   = catalog.Owner{PipelineID: "bench", DestinationID: "site"}
)

// benchPath is the i-th managed path: 100 files per directory.
func benchPath(i int) string { return fmt.Sprintf("d%04d/f%07d.html", i/100, i) }

// benchRoot returns a catalog of n records owned by benchOwner and the
// matching listing, as ReadRoot would return them for a root holding
// exactly the managed files.
func benchRoot(n int) (catalog.State, map[string]int64) {
	c := &catalog.Catalog{SchemaVersion: catalog.SchemaVersion, CreatedAt: benchCreated, UpdatedAt: benchCreated,
		Outputs: make([]catalog.Output, n)}
	listing := make(map[string]int64, n)
	for i := range n {
		p := benchPath(i)
		c.Outputs[i] = catalog.Output{Path: p, PipelineID: benchOwner.PipelineID, DestinationID: benchOwner.DestinationID,
			Source: benchSource, Kind: catalog.KindSource, SHA256: fmt.Sprintf("sha256:%064x", i), Size: 1000,
			CreatedAt: benchCreated, UpdatedAt: benchCreated}
		listing[p] = 1000
	}
	return catalog.State{Status: catalog.StatusCatalog, SchemaVersion: catalog.SchemaVersion, Catalog: c}, listing
}

// BenchmarkMakeAdditiveOne plans an additive publish of one new output into
// a root that already holds n managed outputs: the planner's cost should
// grow at most linearly with n (it indexes the records, scans the listing
// for collisions and unmanaged entries and copies the records into the
// next catalog). ns/record is ns/op divided by n.
func BenchmarkMakeAdditiveOne(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			state, listing := benchRoot(n)
			in := plan.Input{
				Owner:  benchOwner,
				Source: catalog.Source{ID: "bench.2026-06-02", Digest: "sha256:" + fmt.Sprintf("%064x", 2), Created: benchCreated.Add(24 * time.Hour)},
				Outputs: []plan.Output{{Path: "new/report.html", Kind: catalog.KindSource,
					SHA256: "sha256:" + fmt.Sprintf("%064x", 3), Size: 42}},
				State: state, Listing: listing, Workflow: plan.Additive, Now: benchCreated.Add(25 * time.Hour),
			}
			b.ReportAllocs()
			for b.Loop() {
				p, err := plan.Make(in)
				if err != nil {
					b.Fatal(err)
				}
				if p.Action != plan.UpsertAdditive || len(p.Edit.Put) != 1 || p.Retained != n {
					b.Fatalf("action %s putting %d records, want %s putting 1", p.Action, len(p.Edit.Put), plan.UpsertAdditive)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}

// BenchmarkMakeAdditiveOneFromCatalog is BenchmarkMakeAdditiveOne the way
// run plans over a valid catalog: every record goes through the Wants
// filter (as a streaming read would offer it), only the wanted ones are
// kept, and the listing holds only what Lookups asks for. Cost per record
// is the filter's.
func BenchmarkMakeAdditiveOneFromCatalog(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			state, _ := benchRoot(n)
			outs := []plan.Output{{Path: "new/report.html", Kind: catalog.KindSource,
				SHA256: "sha256:" + fmt.Sprintf("%064x", 3), Size: 42}}
			b.ReportAllocs()
			for b.Loop() {
				keep := plan.Wants(outs, benchOwner, plan.Additive)
				known := &plan.Known{Header: state.Catalog.Header(), Records: map[string]*catalog.Output{}}
				for i := range state.Catalog.Outputs {
					if o := &state.Catalog.Outputs[i]; keep(o) {
						known.Records[o.Path] = o
					}
					known.Count++
				}
				in := plan.Input{Owner: benchOwner, Source: benchSource, Outputs: outs,
					State: catalog.State{Status: catalog.StatusCatalog}, Known: known, Listing: map[string]int64{}, Partial: true,
					Workflow: plan.Additive, Now: benchCreated.Add(25 * time.Hour)}
				p, err := plan.Make(in)
				if err != nil {
					b.Fatal(err)
				}
				if p.Action != plan.UpsertAdditive || p.Retained != n {
					b.Fatalf("action %s retained %d", p.Action, p.Retained)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}

// BenchmarkMakeNoop plans a rerun of the same n outputs over the catalog
// they left (skip_same), the planning part of a no-op run.
func BenchmarkMakeNoop(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			state, listing := benchRoot(n)
			outs := make([]plan.Output, n)
			for i, r := range state.Catalog.Outputs {
				outs[i] = plan.Output{Path: r.Path, Kind: r.Kind, SHA256: r.SHA256, Size: r.Size}
			}
			in := plan.Input{Owner: benchOwner, Source: benchSource, Outputs: outs, State: state, Listing: listing,
				Workflow: plan.Additive, Now: benchCreated.Add(time.Hour)}
			b.ReportAllocs()
			for b.Loop() {
				p, err := plan.Make(in)
				if err != nil {
					b.Fatal(err)
				}
				if p.Action != plan.SkipSame {
					b.Fatalf("action %s, want %s", p.Action, plan.SkipSame)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}
