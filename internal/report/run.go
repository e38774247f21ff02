package report

import (
	"sort"

	"github.com/distributor-dev/distributor/internal/plan"
)

// Finish fills in what the document shows of each pipeline's and
// destination's typed result (errors, plans; lists never null), and the
// summary.
func (r *Run) Finish() {
	for i := range r.Pipelines {
		p := &r.Pipelines[i]
		if p.Err != nil {
			p.Error = Str(p.Err.Error())
		}
		for j := range p.Destinations {
			p.Destinations[j].finish()
		}
	}
	r.Summarise()
}

func (d *Destination) finish() {
	d.Outputs, d.Unmanaged, d.Planned = []Output{}, []string{}, nil
	if d.Notifications == nil {
		d.Notifications = []Notification{}
	}
	if pl := d.Plan; pl != nil {
		planned := pl.Counts()
		d.Action, d.Planned, d.Reason, d.Outputs = string(pl.Action), &planned, pl.Reason, outputsOf(pl)
		if pl.Unmanaged != nil {
			d.Unmanaged = pl.Unmanaged
		}
		if d.Status == StatusPlanned {
			d.Counts = planned
		}
	}
	d.Error, d.ErrorDetail = Errors(d.Err)
}

func outputsOf(pl *plan.Plan) []Output {
	out := make([]Output, 0, len(pl.Items))
	for _, it := range pl.Items {
		ro := Output{Path: it.Path, Op: string(it.Op)}
		switch {
		case it.Output != nil:
			size := it.Output.Size
			ro.Kind, ro.SourcePath, ro.SHA256, ro.Size, ro.URL = it.Output.Kind, it.Output.SourcePath, it.Output.SHA256, &size, it.Output.URL
		case it.Previous != nil:
			size := it.Previous.Size
			ro.Kind, ro.SourcePath, ro.SHA256, ro.Size, ro.URL = it.Previous.Kind, it.Previous.SourcePath, it.Previous.SHA256, &size, it.Previous.URL
		}
		out = append(out, ro)
	}
	return out
}

// AppliedCounts counts the creates, overwrites and deletes of p in done.
func AppliedCounts(p *plan.Plan, done []string) plan.Counts {
	var c plan.Counts
	for _, it := range doneItems(p, done) {
		switch it.Op {
		case plan.OpCreate:
			c.Created++
		case plan.OpOverwrite:
			c.Overwritten++
		case plan.OpDelete:
			c.Deleted++
		}
	}
	return c
}

// ChangedURLs returns the sorted URLs of the outputs d wrote and deleted
// (in Done); outputs without a URL are counted in the totals only.
func (d *Destination) ChangedURLs() (written, deleted []string, writtenTotal, deletedTotal int) {
	for _, it := range doneItems(d.Plan, d.Done) {
		switch it.Op {
		case plan.OpCreate, plan.OpOverwrite:
			writtenTotal++
			if it.Output != nil && it.Output.URL != "" {
				written = append(written, it.Output.URL)
			}
		case plan.OpDelete:
			deletedTotal++
			if it.Previous != nil && it.Previous.URL != "" {
				deleted = append(deleted, it.Previous.URL)
			}
		}
	}
	sort.Strings(written)
	sort.Strings(deleted)
	return written, deleted, writtenTotal, deletedTotal
}

func doneItems(p *plan.Plan, done []string) []plan.Item {
	if p == nil || len(done) == 0 {
		return nil
	}
	set := make(map[string]bool, len(done))
	for _, d := range done {
		set[d] = true
	}
	var out []plan.Item
	for _, it := range p.Items {
		if set[it.Path] {
			out = append(out, it)
		}
	}
	return out
}
