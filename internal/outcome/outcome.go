// Package outcome holds the typed result of `distributor run`: for every
// pipeline and each of its destinations, what was planned, what was
// applied, the status, the error, the retries and the notifications sent.
//
// The JSON and text reports (internal/report) and the webhook payloads
// (internal/notify) are pure functions of these values; nothing downstream
// re-parses a rendered string.
package outcome

import (
	"sort"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/plan"
)

// Status is how one destination ended.
type Status string

// Destination statuses (stable: they appear in JSON output).
const (
	// OK: the plan was applied (or there was nothing to do).
	OK Status = "ok"
	// Planned: a dry run planned and wrote nothing.
	Planned Status = "planned"
	// Failed: the plan was refused, or applying it failed.
	Failed Status = "failed"
)

// Run is the result of one `distributor run`.
type Run struct {
	DryRun             bool
	DistributorVersion string
	StartedAt          time.Time
	FinishedAt         time.Time
	Pipelines          []Pipeline
}

// Pipeline is one pipeline's part of a run.
type Pipeline struct {
	ID string
	// SourcePath is the bundle directory the run read.
	SourcePath string
	// Source identifies the bundle; nil when it could not be loaded.
	Source *catalog.Source
	// Err fails the pipeline as a whole (an invalid bundle): nothing was
	// written for any of its destinations.
	Err error
	// Warnings did not fail the pipeline.
	Warnings     []string
	Destinations []Destination
}

// Destination is the result of one destination of a pipeline.
type Destination struct {
	ID        string
	Backend   string
	Root      string
	FixedPath bool
	Workflow  string
	// State is the root's catalog state the plan was made from ("" when
	// the root was never read).
	State catalog.Status
	// Plan is what the run decided to do; nil when it failed before
	// planning (a bad path, an unreachable server).
	Plan       *plan.Plan
	PrimaryURL string
	// Excluded lists the bundle paths publish.include/exclude filtered out.
	Excluded []string
	// Warnings did not fail the destination (a filter pattern that matches
	// no bundle file).
	Warnings []string
	Status   Status
	// Err says why the destination failed (nil unless Status is Failed).
	Err error
	// Applied counts what took effect: equal to the plan's counts when the
	// plan was applied in full; for a failed destination only the writes
	// and deletes that landed and are recorded (unchanged and retained are
	// 0, as nothing was confirmed); zero for a dry run.
	Applied plan.Counts
	// Done lists, sorted, the paths whose write or delete took effect and
	// is recorded (nil for a dry run or when nothing was applied).
	Done []string
	// Retries counts storage operations repeated after a transient failure.
	Retries int
	// Duration is how long the destination took, from expanding its path
	// to ending its transaction (its notifications not included).
	Duration time.Duration
	// LockWait is how long taking the root's lock took (the proof of
	// conditional writes, a wait for another writer and a recovery
	// included); 0 when the run took no lock.
	LockWait time.Duration
	// RecoveryPending says a journal left by a dead (or running) writer is
	// at the root: a real run recovers it before it plans. A dry run plans
	// from the state that recovery would leave.
	RecoveryPending bool
	// Recovered summarises the recovery this run performed, if any.
	Recovered *Recovery
	// TempSwept counts the temporary files (.distributor-tmp-*) that
	// interrupted writes left and this run removed once it held the
	// root's lock (below the whole root after a recovery, in its top
	// directory otherwise); TempSweptBytes is their size.
	TempSwept      int
	TempSweptBytes int64
	// Notifications are the webhook deliveries this destination triggered.
	Notifications []Notification
}

// Recovery summarises recovering a root from a dead run's journal: the
// counts of what it did (or, in a dry run, would do).
type Recovery struct {
	RunID         string
	Committed     bool
	RolledForward int
	Removed       int
	// RemovedBytes is the size of the Removed files.
	RemovedBytes int64
	Dropped      int
	Left         int
}

// Notification is the outcome of one webhook delivery.
type Notification struct {
	ID     string
	Event  string
	Status string // "sent" or "failed"
	Error  string
}

// Action returns the plan's action ("" when there is no plan).
func (d *Destination) Action() plan.Action {
	if d.Plan == nil {
		return ""
	}
	return d.Plan.Action
}

// Counts returns what a report shows as the destination's counts: what a
// dry run would do (the plan's counts), otherwise what was applied.
func (d *Destination) Counts() plan.Counts {
	switch {
	case d.Status != Planned:
		return d.Applied
	case d.Plan == nil:
		return plan.Counts{}
	}
	return d.Plan.Counts()
}

// AppliedCounts counts the items of p whose path is in done (the paths
// whose write or delete took effect and is recorded): created, overwritten
// and deleted only.
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

// ChangedURLs returns the URLs of the outputs d wrote (created or
// overwritten) and deleted, as far as they took effect (Done), each list
// sorted. Outputs without a URL (no links.base_url) are counted in the
// totals but not listed.
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

// doneItems returns the items of p (nil for none) whose path is in done.
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
