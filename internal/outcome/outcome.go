// Package outcome holds the typed result of `distributor run`, per pipeline
// and destination. Reports and webhook payloads are pure functions of it.
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
	OK      Status = "ok"      // applied (or nothing to do)
	Planned Status = "planned" // a dry run: nothing written
	Failed  Status = "failed"  // refused, or applying failed
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
	ID         string
	SourcePath string
	// Source identifies the bundle; nil when it could not be loaded.
	Source *catalog.Source
	// Err fails the pipeline as a whole (an invalid bundle): nothing written.
	Err          error
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
	// State is the catalog state the plan was made from ("": never read).
	State catalog.Status
	// Plan is nil when the destination failed before planning.
	Plan       *plan.Plan
	PrimaryURL string
	Excluded   []string
	Warnings   []string
	Status     Status
	Err        error
	// Applied counts what took effect: the plan's counts when applied in
	// full; for a failed destination only the recorded writes and deletes
	// (unchanged and retained 0, as nothing was confirmed); zero for a dry run.
	Applied plan.Counts
	// Done lists, sorted, the paths whose write or delete took effect and
	// is recorded.
	Done    []string
	Retries int
	// Duration runs from expanding the path to ending the transaction
	// (notifications not included).
	Duration time.Duration
	// LockWait is how long taking the root's lock took (conditional-write
	// proof, waiting and recovery included); 0 without a lock.
	LockWait time.Duration
	// RecoveryPending: a dead (or running) writer's journal is at the root;
	// a real run recovers it before it plans, a dry run plans from the
	// state recovery would leave.
	RecoveryPending bool
	Recovered       *Recovery
	// TempSwept counts the temporary files (.distributor-tmp-*) this run
	// removed once it held the lock (below the whole root after a
	// recovery, in its top directory otherwise).
	TempSwept      int
	TempSweptBytes int64
	Notifications  []Notification
}

// Recovery counts what recovering a root from a dead run's journal did
// (or, in a dry run, would do).
type Recovery struct {
	RunID         string
	Committed     bool
	RolledForward int
	Removed       int
	RemovedBytes  int64
	Dropped       int
	Left          int
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

// Counts is what a dry run would do (the plan's counts), else Applied.
func (d *Destination) Counts() plan.Counts {
	switch {
	case d.Status != Planned:
		return d.Applied
	case d.Plan == nil:
		return plan.Counts{}
	}
	return d.Plan.Counts()
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
