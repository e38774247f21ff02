package notify

import (
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/outcome"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
)

// Event is what one finished destination tells the webhooks subscribed to
// its Name. It is built from the run's typed result (EventOf,
// PipelineFailed), never from a rendered report.
type Event struct {
	// Name is config.EventPublished, config.EventSkipped or
	// config.EventFailed.
	Name          string
	PipelineID    string
	DestinationID string
	Action        plan.Action
	Root          string
	PrimaryURL    string
	// Counts is what took effect (for a failed destination only the
	// changes that landed and are recorded).
	Counts plan.Counts
	Source *report.Source
	// Err says why the destination failed (nil otherwise).
	Err error
}

// EventOf returns the event a finished destination of pipeline p raises,
// and false when it raises none (a dry run's planned status).
func EventOf(p *outcome.Pipeline, d *outcome.Destination) (Event, bool) {
	name := eventName(d.Action(), d.Status)
	if name == "" {
		return Event{}, false
	}
	return Event{Name: name, PipelineID: p.ID, DestinationID: d.ID, Action: d.Action(), Root: d.Root,
		PrimaryURL: d.PrimaryURL, Counts: d.Applied, Source: report.SourceOf(p), Err: d.Err}, true
}

// PipelineFailed is the "failed" event of a destination of pipeline p
// whose bundle is invalid (p.Err): nothing was published to it. root is the
// destination's configured path (placeholders unexpanded: they need the
// manifest).
func PipelineFailed(p *outcome.Pipeline, destinationID, root string) Event {
	return Event{Name: config.EventFailed, PipelineID: p.ID, DestinationID: destinationID, Root: root,
		Source: report.SourceOf(p), Err: p.Err}
}

// eventName: "failed" for a failed status or a fail_* action, "skipped" for
// skip_same, "published" for an action that wrote or deleted and succeeded,
// "" otherwise (a dry run's planned status).
func eventName(a plan.Action, status outcome.Status) string {
	switch {
	case status == outcome.Failed || a.Failed():
		return config.EventFailed
	case status != outcome.OK:
		return ""
	case a == plan.SkipSame:
		return config.EventSkipped
	case a == plan.PublishNew, a == plan.UpsertAdditive, a == plan.ReplaceCatalog, a == plan.ForceReplace:
		return config.EventPublished
	}
	return ""
}

// Payload is the JSON body of e: a pure function of the event.
func (e Event) Payload() Payload {
	p := Payload{Event: e.Name, PipelineID: e.PipelineID, DestinationID: e.DestinationID, Action: string(e.Action),
		Root: e.Root, PrimaryURL: e.PrimaryURL, Counts: e.Counts, Source: e.Source}
	if e.Err != nil {
		p.Error = report.Str(e.Err.Error())
	}
	return p
}
