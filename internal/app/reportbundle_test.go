package app

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
)

// TestReportBundle pins who reports a bundle whose bytes failed their
// check (issue 21.4): the pipeline, once, when nothing was published; a
// destination the bundle stopped with its root as it was is not listed,
// one with something of its own to report is.
func TestReportBundle(t *testing.T) {
	bad := errors.New("bundle /b: data.csv: sha256 mismatch")
	stopped := func(id string) *destinationRun {
		return &destinationRun{stopped: true, rd: report.Destination{DestinationID: id, Status: report.StatusFailed, Err: bad}}
	}
	ids := func(ds []report.Destination) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.DestinationID)
		}
		return out
	}

	t.Run("stopped destinations are not listed", func(t *testing.T) {
		a, b := stopped("a"), stopped("b")
		b.rolledBack = 2
		b.rd.Notifications = []report.Notification{{ID: "ok", Event: "failed", Status: "sent"},
			{ID: "ops", Event: "failed", Status: "failed", Error: "HTTP 500"}}
		op := report.Pipeline{PipelineID: "p", Source: &report.Source{Path: "/b"}}
		reportBundle(&op, []*destinationRun{a, b}, bad)
		if op.Err == nil || !strings.Contains(op.Err.Error(), "data.csv: sha256 mismatch") {
			t.Errorf("pipeline error %v", op.Err)
		}
		if op.Destinations == nil || len(op.Destinations) != 0 {
			t.Errorf("destinations %v, want none (and not nil)", ids(op.Destinations))
		}
		want := []string{"destination b: 2 file(s) created before the mismatch was found were removed again",
			"notification ops (failed) for destination b failed: HTTP 500"}
		if !slices.Equal(op.Warnings, want) {
			t.Errorf("warnings %q\nwant %q", op.Warnings, want)
		}
	})

	t.Run("a destination with its own report stays", func(t *testing.T) {
		own := &destinationRun{rd: report.Destination{DestinationID: "own", Status: report.StatusFailed, Err: errors.New("connection refused")}}
		recovered := stopped("recovered")
		recovered.rd.Recovered = &report.Recovery{Removed: 1}
		op := report.Pipeline{PipelineID: "p", Source: &report.Source{Path: "/b"}}
		reportBundle(&op, []*destinationRun{own, stopped("a"), recovered}, bad)
		if op.Err == nil {
			t.Error("no pipeline error")
		}
		if got := ids(op.Destinations); !slices.Equal(got, []string{"own", "recovered"}) {
			t.Errorf("destinations %v, want [own recovered]", got)
		}
	})

	t.Run("after a destination published, a warning", func(t *testing.T) {
		pub := &destinationRun{rd: report.Destination{DestinationID: "pub", Status: report.StatusOK, Counts: plan.Counts{Created: 1}}}
		op := report.Pipeline{PipelineID: "p", Source: &report.Source{Path: "/b"}}
		reportBundle(&op, []*destinationRun{pub, stopped("a")}, bad)
		if op.Err != nil || len(op.Warnings) != 1 || !strings.Contains(op.Warnings[0], "keep what they published") {
			t.Errorf("error %v, warnings %q", op.Err, op.Warnings)
		}
		if got := ids(op.Destinations); !slices.Equal(got, []string{"pub", "a"}) {
			t.Errorf("destinations %v, want [pub a]", got)
		}
	})

	t.Run("a good bundle lists every destination", func(t *testing.T) {
		op := report.Pipeline{PipelineID: "p", Source: &report.Source{Path: "/b"}}
		reportBundle(&op, []*destinationRun{{rd: report.Destination{DestinationID: "a", Status: report.StatusOK}}}, nil)
		if op.Err != nil || len(op.Destinations) != 1 {
			t.Errorf("error %v, destinations %v", op.Err, ids(op.Destinations))
		}
	})
}
