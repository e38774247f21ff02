// Package report holds the documents distributor prints (spec section 8):
// JSON-tagged types that are the stable machine contract, and the text
// renderings an operator reads. A run's document is also its typed result
// (the fields out of JSON), which webhooks and metrics read.
package report

import (
	"fmt"
	"sort"
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
	Transform  string `json:"-"` // for the text: a sidecar says what it compresses
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

// Finish fills in what the document shows of each pipeline's and
// destination's typed result (errors, plans; lists never null), and the
// summary.
func (r *Run) Finish() {
	s := Summary{Actions: map[plan.Action]int{}}
	for _, a := range plan.Actions {
		s.Actions[a] = 0
	}
	for i := range r.Pipelines {
		p := &r.Pipelines[i]
		if p.Err != nil {
			p.Error = Str(p.Err.Error())
		}
		if p.Error != nil {
			s.PipelinesFailed++
		}
		for j := range p.Destinations {
			d := &p.Destinations[j]
			d.finish()
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
			ro.Kind, ro.SourcePath, ro.Transform, ro.SHA256, ro.Size, ro.URL = it.Output.Kind, it.Output.SourcePath, it.Output.Transform, it.Output.SHA256, &size, it.Output.URL
		case it.Previous != nil:
			size := it.Previous.Size
			ro.Kind, ro.SourcePath, ro.Transform, ro.SHA256, ro.Size, ro.URL = it.Previous.Kind, it.Previous.SourcePath, it.Previous.Transform, it.Previous.SHA256, &size, it.Previous.URL
		}
		out = append(out, ro)
	}
	return out
}

// AppliedCounts counts the creates, overwrites and deletes of p in done
// (only writes and deletes take effect: done holds no other item).
func AppliedCounts(p *plan.Plan, done []string) plan.Counts {
	return (&plan.Plan{Items: doneItems(p, done)}).Counts()
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

// Validate is the document `distributor validate` prints.
type Validate struct {
	Command      string `json:"command"`
	Config       string `json:"config"`
	Valid        bool   `json:"valid"`
	Pipelines    int    `json:"pipelines"`
	Destinations int    `json:"destinations"`
	// Source is the --source bundle, planned for every pipeline.
	Source *Source `json:"source,omitempty"`
	// Sources: without --source, the configured bundles read and planned.
	Sources  []ValidateSource  `json:"sources,omitempty"`
	Outputs  []ValidateOutputs `json:"outputs"`
	Problems []string          `json:"problems"`
	Warnings []string          `json:"warnings,omitempty"`
	// Notes say what was not checked and why; they are not problems.
	Notes []string `json:"notes,omitempty"`
}

// ValidateSource is a configured source bundle validate read and planned.
type ValidateSource struct {
	PipelineID string `json:"pipeline_id"`
	Source
}

// ValidateOutputs summarises what a bundle would publish at one destination.
type ValidateOutputs struct {
	PipelineID    string `json:"pipeline_id"`
	DestinationID string `json:"destination_id"`
	Root          string `json:"root"`
	Outputs       int    `json:"outputs"`
	PrimaryURL    string `json:"primary_url"`
}

// BundleVerify is the document `distributor bundle verify` prints.
type BundleVerify struct {
	Command  string          `json:"command"`
	Dir      string          `json:"dir"`
	Valid    bool            `json:"valid"`
	ID       string          `json:"id,omitempty"`
	Digest   string          `json:"digest,omitempty"`
	Created  string          `json:"created,omitempty"`
	Files    int             `json:"files"`
	Problems []BundleProblem `json:"problems"`
	// Hint is the next step for an invalid bundle, if any.
	Hint     string   `json:"hint,omitempty"`
	Warnings []string `json:"warnings"`
}

// BundleProblem is one reason a bundle is invalid.
type BundleProblem struct {
	// Path is the file, relative to the bundle; "" for the directory itself.
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// BundleSeal is the document `distributor bundle seal` prints.
type BundleSeal struct {
	Command  string `json:"command"`
	Dir      string `json:"dir"`
	Manifest string `json:"manifest"`
	ID       string `json:"id"`
	Digest   string `json:"digest"`
	Created  string `json:"created"`
	Files    int    `json:"files"`
}

func (s *BundleSeal) text(w *fitter) {
	fmt.Fprintf(w, "sealed %s: %d file(s), id %s\n  digest %s\n", s.Manifest, s.Files, s.ID, s.Digest)
}

// ConfigInit is the document `distributor config init` prints.
type ConfigInit struct {
	Command  string `json:"command"`
	Path     string `json:"path"`
	Replaced bool   `json:"replaced"` // an existing file was overwritten (--force)
	Named    string `json:"-"`        // the path as named, for the next step
}

func (c *ConfigInit) text(w *fitter) {
	fmt.Fprintf(w, "wrote %s: check it with 'distributor validate --config %s'\n", c.Path, c.Named)
}
