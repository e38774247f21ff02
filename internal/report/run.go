package report

import (
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/outcome"
	"github.com/distributor-dev/distributor/internal/plan"
)

// RunOf is the document of a run: a pure function of its typed result.
func RunOf(o *outcome.Run) *Run {
	r := &Run{Command: "run", DryRun: o.DryRun, DistributorVersion: o.DistributorVersion,
		StartedAt: catalog.FormatTime(o.StartedAt), FinishedAt: catalog.FormatTime(o.FinishedAt),
		Pipelines: make([]Pipeline, 0, len(o.Pipelines))}
	for i := range o.Pipelines {
		r.Pipelines = append(r.Pipelines, PipelineOf(&o.Pipelines[i]))
	}
	r.Summarise()
	return r
}

// SourceOf is the report's identification of a pipeline's bundle.
func SourceOf(p *outcome.Pipeline) *Source {
	s := &Source{Path: p.SourcePath}
	if p.Source != nil {
		s.ID, s.Digest, s.Created = p.Source.ID, p.Source.Digest, catalog.FormatTime(p.Source.Created)
	}
	return s
}

// PipelineOf is one pipeline's part of the run document.
func PipelineOf(p *outcome.Pipeline) Pipeline {
	rp := Pipeline{PipelineID: p.ID, Source: SourceOf(p), Warnings: p.Warnings,
		Destinations: make([]Destination, 0, len(p.Destinations))}
	if p.Err != nil {
		rp.Error = Str(p.Err.Error())
	}
	for i := range p.Destinations {
		rp.Destinations = append(rp.Destinations, DestinationOf(&p.Destinations[i]))
	}
	return rp
}

// DestinationOf is one destination's part of the run document.
func DestinationOf(d *outcome.Destination) Destination {
	rd := Destination{DestinationID: d.ID, Backend: d.Backend, Root: d.Root, FixedPath: d.FixedPath,
		Workflow: d.Workflow, State: string(d.State), Action: string(d.Action()), Status: string(d.Status),
		Outputs: []Output{}, Unmanaged: []string{}, Counts: d.Counts(), PrimaryURL: d.PrimaryURL,
		Notifications: []Notification{}, Retries: d.Retries, RecoveryPending: d.RecoveryPending,
		Excluded: d.Excluded, Warnings: d.Warnings}
	if d.Plan != nil {
		planned := d.Plan.Counts()
		rd.Planned = &planned
		rd.Reason = d.Plan.Reason
		rd.Outputs = outputsOf(d.Plan)
		if d.Plan.Unmanaged != nil {
			rd.Unmanaged = d.Plan.Unmanaged
		}
	}
	rd.Error, rd.ErrorDetail = Errors(d.Err)
	rd.RootRecovery = RecoveryOf(d.Recovered, d.TempSwept, d.TempSweptBytes)
	for _, n := range d.Notifications {
		rd.Notifications = append(rd.Notifications, Notification(n))
	}
	return rd
}

// RecoveryOf is the RootRecovery of a recovery (nil for none) and swept temp files.
func RecoveryOf(r *outcome.Recovery, swept int, sweptBytes int64) RootRecovery {
	var rr RootRecovery
	if r != nil {
		rr.Recovered = &Recovery{DeadRun: r.RunID, Committed: r.Committed, RolledForward: r.RolledForward,
			Removed: r.Removed, RemovedBytes: r.RemovedBytes, Dropped: r.Dropped, Left: r.Left}
	}
	if swept > 0 {
		rr.TempSwept = &Removal{Files: swept, Bytes: sweptBytes}
	}
	return rr
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
