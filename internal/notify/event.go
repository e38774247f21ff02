package notify

import (
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
)

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

// EventOf returns the notification a finished destination of pipeline p
// raises, and false when it raises none (a dry run's planned status).
func EventOf(p *report.Pipeline, d *report.Destination) (Payload, bool) {
	var action plan.Action
	if d.Plan != nil {
		action = d.Plan.Action
	}
	name := eventName(action, d.Status)
	if name == "" {
		return Payload{}, false
	}
	ev := Payload{Event: name, PipelineID: p.PipelineID, DestinationID: d.DestinationID,
		Action: string(action), Root: d.Root, PrimaryURL: d.PrimaryURL, Counts: d.Counts,
		Source: p.Source, URLs: urlsOf(d.ChangedURLs())}
	_, ev.Error = report.Errors(d.Err) // the whole error
	return ev, true
}

// PipelineFailed is the "failed" notification of a destination of pipeline p
// whose bundle is invalid; root is unexpanded (placeholders need the manifest).
func PipelineFailed(p *report.Pipeline, destinationID, root string) Payload {
	ev := Payload{Event: config.EventFailed, PipelineID: p.PipelineID, DestinationID: destinationID,
		Root: root, Source: p.Source, URLs: urlsOf(nil, nil, 0, 0)}
	_, ev.Error = report.Errors(p.Err)
	return ev
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

// urlsOf lists the changed URLs (see ChangedURLs) up to MaxURLs of each.
func urlsOf(written, deleted []string, writtenTotal, deletedTotal int) URLs {
	cut := len(written) > MaxURLs || len(deleted) > MaxURLs ||
		len(written) < writtenTotal || len(deleted) < deletedTotal
	return URLs{Written: bounded(written), Deleted: bounded(deleted),
		WrittenTotal: writtenTotal, DeletedTotal: deletedTotal, Truncated: cut}
}

// bounded is the first MaxURLs of urls, never nil.
func bounded(urls []string) []string {
	if len(urls) > MaxURLs {
		urls = urls[:MaxURLs]
	}
	return append([]string{}, urls...)
}
