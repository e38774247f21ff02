package notify

import (
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
)

// Event is what one finished destination tells the webhooks subscribed to
// its Name, built from the run's typed result.
type Event struct {
	Name          string // config.EventPublished, EventSkipped or EventFailed
	PipelineID    string
	DestinationID string
	Action        plan.Action
	Root          string
	PrimaryURL    string
	Counts        plan.Counts // what took effect
	Source        *report.Source
	Err           error
	// Written and Deleted are the changed URLs (see ChangedURLs), for CDN
	// purges.
	Written, Deleted           []string
	WrittenTotal, DeletedTotal int
}

// MaxURLs bounds each URL list of a payload: a receiver that needs more
// (a first publish of a large site) sees the totals and purges by prefix.
const MaxURLs = 100

// URLs is the payload's changed URLs: up to MaxURLs of each, the totals.
type URLs struct {
	Written      []string `json:"written"`
	Deleted      []string `json:"deleted"`
	WrittenTotal int      `json:"written_total"`
	DeletedTotal int      `json:"deleted_total"`
	// Truncated: a list was cut, or outputs without a URL were not listed.
	Truncated bool `json:"truncated"`
}

// EventOf returns the event a finished destination of pipeline p raises,
// and false when it raises none (a dry run's planned status).
func EventOf(p *report.Pipeline, d *report.Destination) (Event, bool) {
	var action plan.Action
	if d.Plan != nil {
		action = d.Plan.Action
	}
	name := eventName(action, d.Status)
	if name == "" {
		return Event{}, false
	}
	ev := Event{Name: name, PipelineID: p.PipelineID, DestinationID: d.DestinationID, Action: action, Root: d.Root,
		PrimaryURL: d.PrimaryURL, Counts: d.Counts, Source: p.Source, Err: d.Err}
	ev.Written, ev.Deleted, ev.WrittenTotal, ev.DeletedTotal = d.ChangedURLs()
	return ev, true
}

// PipelineFailed is the "failed" event of a destination of pipeline p whose
// bundle is invalid; root is unexpanded (placeholders need the manifest).
func PipelineFailed(p *report.Pipeline, destinationID, root string) Event {
	return Event{Name: config.EventFailed, PipelineID: p.PipelineID, DestinationID: destinationID, Root: root,
		Source: p.Source, Err: p.Err}
}

func eventName(a plan.Action, status string) string {
	switch {
	case status == report.StatusFailed || a.Failed():
		return config.EventFailed
	case status != report.StatusOK:
		return ""
	case a == plan.SkipSame:
		return config.EventSkipped
	case a == plan.PublishNew, a == plan.UpsertAdditive, a == plan.ReplaceCatalog, a == plan.ForceReplace:
		return config.EventPublished
	}
	return ""
}

// Payload is the JSON body of e.
func (e Event) Payload() Payload {
	p := Payload{Event: e.Name, PipelineID: e.PipelineID, DestinationID: e.DestinationID, Action: string(e.Action),
		Root: e.Root, PrimaryURL: e.PrimaryURL, Counts: e.Counts, Source: e.Source,
		URLs: URLs{Written: bounded(e.Written), Deleted: bounded(e.Deleted), WrittenTotal: e.WrittenTotal, DeletedTotal: e.DeletedTotal}}
	p.URLs.Truncated = len(e.Written) > MaxURLs || len(e.Deleted) > MaxURLs ||
		len(e.Written) < e.WrittenTotal || len(e.Deleted) < e.DeletedTotal
	if e.Err != nil {
		p.Error = report.Str(e.Err.Error())
	}
	return p
}

// bounded is the first MaxURLs of urls, never nil.
func bounded(urls []string) []string {
	if len(urls) > MaxURLs {
		urls = urls[:MaxURLs]
	}
	return append([]string{}, urls...)
}
