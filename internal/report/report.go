// Package report holds the documents distributor prints (spec section 8):
// JSON-tagged types that are the stable machine contract, and the text
// renderings an operator reads. A run's document is also its typed result
// (the fields out of JSON), which webhooks and metrics read.
package report

import (
	"time"

	"github.com/distributor-dev/distributor/internal/plan"
)

// Run is the document `distributor run` prints.
type Run struct {
	Command            string     `json:"command"`
	DryRun             bool       `json:"dry_run"`
	DistributorVersion string     `json:"distributor_version"`
	StartedAt          string     `json:"started_at"`
	FinishedAt         string     `json:"finished_at"`
	Pipelines          []Pipeline `json:"pipelines"`
	Summary            Summary    `json:"summary"`
	// LockHeld: the run failed only because roots stayed locked by other
	// writers past the lock timeout (exit status 11). Not in the document.
	LockHeld bool `json:"-"`
}

// Pipeline is one pipeline's part of a run.
type Pipeline struct {
	PipelineID   string        `json:"pipeline_id"`
	Source       *Source       `json:"source"`
	Error        *string       `json:"error"`
	Warnings     []string      `json:"warnings,omitempty"`
	Destinations []Destination `json:"destinations"`
	// Err fails the pipeline as a whole (an invalid bundle): nothing written.
	Err error `json:"-"`
}

// Source identifies the bundle a pipeline published.
type Source struct {
	Path    string `json:"path"`
	ID      string `json:"id,omitempty"`
	Digest  string `json:"digest,omitempty"`
	Created string `json:"created,omitempty"`
}

// Destination is one destination's result.
type Destination struct {
	DestinationID string   `json:"destination_id"`
	Backend       string   `json:"backend"`
	Root          string   `json:"root"`
	FixedPath     bool     `json:"fixed_path"`
	Workflow      string   `json:"workflow"`
	State         string   `json:"state"`
	Action        string   `json:"action"`
	Status        string   `json:"status"`
	Outputs       []Output `json:"outputs"`
	Unmanaged     []string `json:"unmanaged"`
	// Counts is what took effect (for planned, once finished, what a dry run
	// would do); a failed destination counts only the recorded writes and
	// deletes (unchanged and retained 0, as nothing was confirmed).
	Counts plan.Counts `json:"counts"`
	// Planned is the plan's counts, whatever happened to it; null when the
	// destination failed before planning.
	Planned       *plan.Counts   `json:"planned"`
	PrimaryURL    string         `json:"primary_url"`
	Notifications []Notification `json:"notifications"`
	// Error is the failure in brief, ErrorDetail the whole error (both
	// null unless the destination failed).
	Error       *string `json:"error"`
	ErrorDetail *string `json:"error_detail"`
	// Reason explains a fail_* action or a destructive plan.
	Reason string `json:"reason,omitempty"`
	// Retries counts storage operations repeated after a transient failure.
	Retries int `json:"retries,omitempty"`
	// Excluded lists the bundle paths publish.include/exclude filtered out.
	Excluded []string `json:"excluded,omitempty"`
	// Warnings did not fail the destination.
	Warnings []string `json:"warnings,omitempty"`
	// RecoveryPending: a dead writer's intent journal is at the root (a
	// real run recovers it first; a dry run plans from what recovery leaves).
	RecoveryPending bool `json:"recovery_pending,omitempty"`
	RootRecovery
	// Plan is nil when the destination failed before planning.
	Plan *plan.Plan `json:"-"`
	// Err is the failure Error and ErrorDetail render.
	Err error `json:"-"`
	// Done lists, sorted, the paths whose write or delete took effect and
	// is recorded.
	Done []string `json:"-"`
	// Duration runs from expanding the path to ending the transaction
	// (notifications not included).
	Duration time.Duration `json:"-"`
	// LockWait is how long taking the root's lock took (conditional-write
	// proof, waiting and recovery included); 0 without a lock.
	LockWait time.Duration `json:"-"`
}

// RootRecovery is what a writing command, once it held the root's lock,
// did of what dead runs left: a journal recovered, temporary files swept.
type RootRecovery struct {
	Recovered *Recovery `json:"recovered,omitempty"`
	TempSwept *Removal  `json:"temp_swept,omitempty"`
}

// Removal counts removed files and their size.
type Removal struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// Recovery summarises a recovery from a dead run's journal, in counts.
type Recovery struct {
	DeadRun       string `json:"dead_run"`
	Committed     bool   `json:"committed"`
	RolledForward int    `json:"rolled_forward"`
	Removed       int    `json:"removed"`
	RemovedBytes  int64  `json:"removed_bytes"`
	Dropped       int    `json:"dropped"`
	Left          int    `json:"left"`
}

// Destination statuses.
const (
	StatusOK      = "ok"      // applied (or nothing to do)
	StatusPlanned = "planned" // a dry run: nothing written
	StatusFailed  = "failed"  // refused, or applying failed
)

// Output is one path of a destination's plan.
type Output struct {
	Path       string `json:"path"`
	Op         string `json:"op"`
	Kind       string `json:"kind,omitempty"`
	SourcePath string `json:"source_path,omitempty"`
	SHA256     string `json:"sha256,omitempty"`
	Size       *int64 `json:"size,omitempty"`
	URL        string `json:"url,omitempty"`
}

// Notification is the outcome of one webhook delivery.
type Notification struct {
	ID     string `json:"id"`
	Event  string `json:"event"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Summary totals a run.
type Summary struct {
	Destinations int                 `json:"destinations"`
	Failed       int                 `json:"failed"`
	Actions      map[plan.Action]int `json:"actions"`
	Created      int                 `json:"created"`
	Overwritten  int                 `json:"overwritten"`
	Unchanged    int                 `json:"unchanged"`
	Deleted      int                 `json:"deleted"`
	// Planned totals the plans' counts (the fields above: what took effect).
	Planned plan.Counts `json:"planned"`
	// PipelinesFailed counts pipelines that failed as a whole (an invalid
	// bundle), not counted in Destinations/Failed.
	PipelinesFailed int `json:"pipelines_failed"`
}

// Summarise fills r.Summary from its destinations.
func (r *Run) Summarise() {
	s := Summary{Actions: map[plan.Action]int{}}
	for _, a := range plan.Actions {
		s.Actions[a] = 0
	}
	for _, p := range r.Pipelines {
		if p.Error != nil {
			s.PipelinesFailed++
		}
		for _, d := range p.Destinations {
			s.Destinations++
			if d.Status == StatusFailed {
				s.Failed++
			}
			if d.Action != "" {
				s.Actions[plan.Action(d.Action)]++
			}
			s.Created += d.Counts.Created
			s.Overwritten += d.Counts.Overwritten
			s.Unchanged += d.Counts.Unchanged
			s.Deleted += d.Counts.Deleted
			if d.Planned != nil {
				s.Planned.Created += d.Planned.Created
				s.Planned.Overwritten += d.Planned.Overwritten
				s.Planned.Unchanged += d.Planned.Unchanged
				s.Planned.Deleted += d.Planned.Deleted
				s.Planned.Retained += d.Planned.Retained
			}
		}
	}
	r.Summary = s
}

// Failed reports whether the run must exit 1: a pipeline error, failed destination or fail_* action (dry run too).
func (r *Run) Failed() bool {
	for _, p := range r.Pipelines {
		if p.Error != nil {
			return true
		}
		for _, d := range p.Destinations {
			if d.Status == StatusFailed || plan.Action(d.Action).Failed() {
				return true
			}
		}
	}
	return false
}

// Str returns a pointer to s, for the nullable error fields.
func Str(s string) *string { return &s }
