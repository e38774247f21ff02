package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/glob"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/render"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// Write phases (txn.Write.Phase): a reader never sees a page before the files
// it references, nor the primary page (index, feed) before the pages it links.
// A sidecar comes before its output (spec 3.4), so that a web server never
// serves an output's old sidecar in place of its new bytes.
const (
	PhaseSidecars = iota // precompressed sidecars (P.gz beside P)
	PhaseAssets          // every other output that is not an HTML page
	PhaseHTML
	PhasePrimary
)

// webWrites sets a write's phase and its metadata: the first matching
// headers rule's (object stores only; config rejects rules elsewhere), and
// Content-Encoding for the outputs of outs stored compressed.
func webWrites(d *config.Destination, primary string, outs []render.Output) func(*txn.Write) {
	last := []string{primary}
	if d.Index != nil {
		last = append(last, d.Index.Path, d.Index.Feed)
	}
	encoded := map[string]string{}
	for _, o := range outs {
		if o.Encoding != "" && o.Path == o.Plain.Path {
			encoded[o.Path] = o.Encoding
		}
	}
	return func(w *txn.Write) {
		lower := strings.ToLower(w.Path)
		_, sidecar := catalog.SidecarOf(w.Path, w.Record.Transform)
		switch {
		case sidecar:
			w.Phase = PhaseSidecars
		case w.Path != "" && slices.Contains(last, w.Path):
			w.Phase = PhasePrimary
		case strings.HasSuffix(lower, ".html") || strings.HasSuffix(lower, ".htm"):
			w.Phase = PhaseHTML
		default:
			w.Phase = PhaseAssets
		}
		for _, r := range d.Headers { // the first matching rule's
			if glob.Match(r.Match, w.Path) {
				w.Metadata = storage.Metadata{CacheControl: r.CacheControl, ContentType: r.ContentType, ContentDisposition: r.ContentDisposition}
				break
			}
		}
		w.Metadata.ContentEncoding = encoded[w.Path]
	}
}

// reportCollector keeps, as the catalog streams, what one destination's archive
// index needs of its records: a few dozen bytes each.
type reportCollector struct {
	dest string
	recs []render.IndexRecord
}

func (c *reportCollector) visit(o *catalog.Output) {
	if o.DestinationID != c.dest || o.Transform == catalog.TransformIndex || o.Transform == catalog.TransformFeed {
		return
	}
	c.recs = append(c.recs, indexRecord(o.Path, o.Owner(), o.Kind, o.Transform, o.Source))
}

func indexRecord(path string, owner catalog.Owner, kind, transform string, s catalog.Source) render.IndexRecord {
	return render.IndexRecord{Path: path, PipelineID: owner.PipelineID, DestinationID: owner.DestinationID, Kind: kind, Transform: transform,
		Source: render.PageSource{ID: s.ID, Digest: s.Digest, Created: s.Created}}
}

// withIndex returns outs, sorted, with d's index and feed built from the
// catalog as the run leaves it: recs minus what it replaces or deletes, plus outs.
func withIndex(d *config.Destination, owner catalog.Owner, source catalog.Source, force bool, status catalog.Status, recs []render.IndexRecord, outs []render.Output) ([]render.Output, error) {
	if d.Index == nil {
		return outs, nil
	}
	planned := make(map[string]bool, len(outs))
	var all []render.IndexRecord
	for _, o := range outs {
		planned[o.Path] = true
		all = append(all, indexRecord(o.Path, owner, o.Kind, o.Transform, source))
	}
	if status == catalog.StatusCatalog && !force {
		for _, r := range recs {
			if planned[r.Path] {
				continue // this run replaces it
			}
			if d.Workflow == config.WorkflowReplacement && r.PipelineID == owner.PipelineID && r.DestinationID == owner.DestinationID {
				continue // this run deletes it
			}
			all = append(all, r)
		}
	}
	idx, err := render.Index(d, render.IndexEntries(d, all))
	if err != nil {
		return nil, fmt.Errorf("destination %q: %w", d.ID, err)
	}
	res := append(slices.Clone(outs), idx...)
	slices.SortFunc(res, func(a, b render.Output) int { return strings.Compare(a.Path, b.Path) })
	return res, nil
}

// refuseForeignIndex fails pl (fail_conflict) when d's index or feed path is
// another destination's at this root (templated roots hide that from config).
func refuseForeignIndex(d *config.Destination, known *plan.Known, pl *plan.Plan) {
	if d.Index == nil || pl.Action.Failed() || pl.Action == plan.ForceReplace || known == nil {
		return
	}
	for _, p := range []string{d.Index.Path, d.Index.Feed} {
		r := known.Records[p]
		if p == "" || r == nil || r.DestinationID == d.ID || (r.Transform != catalog.TransformIndex && r.Transform != catalog.TransformFeed) {
			continue
		}
		pl.Action = plan.FailConflict
		pl.Reason = fmt.Sprintf("%s is destination %q's archive %s at this root (pipeline %q): two destinations cannot share one index path; "+
			"give this destination its own index.path/index.feed", p, r.DestinationID, r.Transform, r.PipelineID)
		pl.Edit = nil
		return
	}
}
