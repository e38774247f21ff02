package app

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/metrics"
	"github.com/distributor-dev/distributor/internal/notify"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/render"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/overlay"
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/storage/retry"
	"github.com/distributor-dev/distributor/internal/txn"
)

// RunOptions are the inputs of Run, as `distributor run` takes them
// (Logger, OnEvent and Tuning make the library's App for the call).
type RunOptions struct {
	// Pipelines selects the pipelines to publish (none: every one).
	Pipelines []string
	// Destination publishes only to this destination ("": every one).
	Destination string
	// Source publishes this bundle directory instead of the pipeline's
	// configured source (needs exactly one pipeline).
	Source string
	// DryRun plans and reports; nothing is written and no webhook called.
	DryRun bool
	// Force replaces everything under one root, unmanaged files included
	// (needs one pipeline and Destination).
	Force bool
	// MaxDeletes, when set, overrides every destination's max_deletes.
	MaxDeletes *int
	// AllowEmpty lets a replacement that plans no outputs delete the owner's
	// (an empty bundle selection is more often a mistake).
	AllowEmpty bool
	// Jobs is how many transfers run at once per destination (0: the backend's default).
	Jobs int
	// Rewrite writes every planned output, unchanged ones too (to re-apply headers).
	Rewrite bool
	// MetricsFile is where a real run writes its Prometheus metrics (pass
	// cfg.MetricsFile() for metrics_file); a write failure only warns.
	MetricsFile string
	Logger      *slog.Logger
	// OnEvent receives progress, from several goroutines at once.
	OnEvent func(Event)
	Tuning
}

// jobsFor is jobs when set, else the backend's default (storage.Backend.Jobs).
func jobsFor(backend string, jobs int) int {
	if jobs > 0 {
		return jobs
	}
	b, _ := registry.Lookup(backend)
	return max(b.Jobs, 1)
}

// UsageError is an invalid combination of options (exit status 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Run publishes every selected pipeline to each of its destinations,
// independently, and writes the metrics file of a real run. The error is
// only for invalid options; the rest is in the document.
func (a *App) Run(ctx context.Context, cfg *config.Config, opts RunOptions) (*report.Run, error) {
	if len(opts.Pipelines) > 1 && (opts.Source != "" || opts.Force) {
		return nil, &UsageError{Msg: "Source and Force need exactly one pipeline"}
	}
	r := &report.Run{Command: "run", DryRun: opts.DryRun, DistributorVersion: a.Version,
		StartedAt: catalog.FormatTime(a.Now()), Pipelines: []report.Pipeline{}}
	for i := 0; i == 0 || i < len(opts.Pipelines); i++ {
		pipelines, err := selectPipelines(cfg, opts, i)
		if err != nil {
			return nil, err
		}
		for _, p := range pipelines {
			r.Pipelines = append(r.Pipelines, a.runPipeline(ctx, cfg, p, opts))
		}
	}
	finished := a.Now()
	r.FinishedAt = catalog.FormatTime(finished)
	if opts.MetricsFile != "" && !opts.DryRun {
		samples := metrics.FromRun(r, finished, func(id string) []string {
			p, _ := cfg.Pipeline(id)
			return selected(p, opts.Destination)
		})
		if err := metrics.Write(opts.MetricsFile, a.Version, samples); err != nil {
			a.Logger.Warn("the metrics file was not written (the run's exit status is unchanged)", "err", err)
		}
	}
	r.Finish()
	r.LockHeld = onlyLockHeld(r)
	return r, nil
}

// selected lists the destinations of p (nil: none) that only ("": all) selects.
func selected(p *config.Pipeline, only string) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, id := range p.Destinations {
		if only == "" || id == only {
			out = append(out, id)
		}
	}
	return out
}

// onlyLockHeld reports whether the run failed only on roots other writers held past the lock timeout.
func onlyLockHeld(r *report.Run) bool {
	held := false
	for _, p := range r.Pipelines {
		if p.Err != nil {
			return false
		}
		for _, d := range p.Destinations {
			var he *lock.HeldError
			if d.Plan != nil && d.Plan.Action.Failed() || d.Status == report.StatusFailed && !errors.As(d.Err, &he) {
				return false
			}
			held = held || d.Status == report.StatusFailed
		}
	}
	return held
}

// selectPipelines selects the pipelines of opts.Pipelines[i] (none: every one).
func selectPipelines(cfg *config.Config, opts RunOptions, i int) ([]*config.Pipeline, error) {
	pipeline := ""
	if i < len(opts.Pipelines) {
		pipeline = opts.Pipelines[i]
	}
	if opts.Source != "" && pipeline == "" {
		ps := publishers(cfg, opts.Destination)
		if len(ps) != 1 {
			return nil, &UsageError{fmt.Sprintf("--source needs --pipeline: it names the bundle of one pipeline (pipelines: %s)", pipelineList(cfg))}
		}
		pipeline = ps[0].ID
	}
	if opts.Force && (pipeline == "" || opts.Destination == "") {
		return nil, &UsageError{"--force needs --pipeline and --destination: it replaces exactly one destination root"}
	}
	if pipeline == "" {
		ps := publishers(cfg, opts.Destination)
		if len(ps) == 0 {
			return nil, &UsageError{fmt.Sprintf("no pipeline publishes to destination %q", opts.Destination)}
		}
		return ps, nil
	}
	p, err := pipelineFor(cfg, pipeline, opts.Destination)
	if err != nil {
		return nil, err
	}
	return []*config.Pipeline{p}, nil
}

func (a *App) runPipeline(ctx context.Context, cfg *config.Config, p *config.Pipeline, opts RunOptions) report.Pipeline {
	dir := cmp.Or(opts.Source, p.Source)
	op := report.Pipeline{PipelineID: p.ID, Source: &report.Source{Path: dir}, Destinations: []report.Destination{}}
	// Bytes are hashed only if a destination writes (contentCheck): a no-op rerun reads none.
	b, err := bundle.LoadShallow(ctx, dir)
	if err != nil {
		var ve *bundle.ValidationError
		if errors.As(err, &ve) && errors.Is(err, fs.ErrNotExist) {
			ve.Hint = fmt.Sprintf("check the source of pipeline %s in %s", p.ID, cmp.Or(cfg.File, "the configuration"))
			if opts.Source != "" {
				ve.Hint = "check --source"
			}
		}
		op.Err = sourceErr(dir, err)
		a.Logger.Error("invalid source bundle", "pipeline", p.ID, "dir", dir, "err", err)
		if !opts.DryRun && len(cfg.Notifications) > 0 {
			a.notifyPipelineFailed(ctx, cfg, p, opts.Destination, &op)
		}
		return op
	}
	defer b.Close()
	op.Source = sourceOf(b)
	for _, u := range b.Unlisted {
		op.Warnings = append(op.Warnings, fmt.Sprintf("%s is in the bundle directory but not in its manifest: ignored", u))
	}
	vc := &contentCheck{b: b}
	var runs []*destinationRun
	for _, id := range selected(p, opts.Destination) {
		d, _ := cfg.Destination(id) // references are validated by config
		began := a.Now()
		dr := a.runDestination(ctx, p, d, b, vc, opts)
		dr.rd.Duration = a.Now().Sub(began)
		if !opts.DryRun && len(cfg.Notifications) > 0 { // a failed one is a warning, never changing the status
			if ev, ok := notify.EventOf(&op, &dr.rd); ok {
				dr.rd.Notifications = append(dr.rd.Notifications, a.deliver(ctx, cfg, ev)...)
			}
		}
		runs = append(runs, dr)
	}
	reportBundle(&op, runs, vc.err)
	return op
}

// reportBundle fills in op's destinations and reports a failed bytes check
// (bad) once: as the pipeline's failure if no destination published (listing
// only those with their own failure or recovery; the others' undelivered
// notifications become warnings), else as a warning.
func reportBundle(op *report.Pipeline, runs []*destinationRun, bad error) {
	for _, dr := range runs {
		op.Destinations = append(op.Destinations, dr.rd)
	}
	if bad == nil {
		return
	}
	err := sourceErr(op.Source.Path, bad)
	wrote := slices.ContainsFunc(op.Destinations, func(d report.Destination) bool {
		return d.Counts.Created+d.Counts.Overwritten+d.Counts.Deleted > 0
	})
	if wrote {
		op.Warnings = append(op.Warnings, err.Error()+"; destinations published before it was found keep what they published")
		return
	}
	op.Err = err
	op.Destinations = op.Destinations[:0]
	for _, dr := range runs {
		rd := dr.rd
		if !dr.stopped || rd.Recovered != nil || rd.RecoveryPending {
			op.Destinations = append(op.Destinations, rd)
			continue
		}
		if dr.rolledBack > 0 {
			op.Warnings = append(op.Warnings, fmt.Sprintf("destination %s: %d file(s) created before the mismatch was found were removed again",
				rd.DestinationID, dr.rolledBack))
		}
		warnUndelivered(op, rd.Notifications, rd.DestinationID)
	}
}

// CheckNotifications checks, before a real run, that every webhook's
// secret_env is set; a missing one is a *UsageError, never naming the secret.
func (a *App) CheckNotifications(cfg *config.Config) error {
	missing := a.missingSecrets(cfg)
	if len(missing) == 0 {
		return nil
	}
	return &UsageError{Msg: strings.Join(missing, "\n") +
		"\n(set the variable to the webhook's signing secret, or remove secret_env to send unsigned notifications; nothing was published)"}
}

func (a *App) missingSecrets(cfg *config.Config) []string {
	var missing []string
	for _, n := range cfg.Notifications {
		if n.SecretEnv != "" && a.getenv(n.SecretEnv) == "" {
			missing = append(missing, fmt.Sprintf("notification %s: webhook.secret_env names %s, which is unset or empty", n.ID, n.SecretEnv))
		}
	}
	return missing
}

// notifyPipelineFailed raises "failed" for each destination (only, when set)
// of a pipeline with an invalid bundle; failed deliveries become pipeline
// warnings, as no destination is listed.
func (a *App) notifyPipelineFailed(ctx context.Context, cfg *config.Config, p *config.Pipeline, only string, op *report.Pipeline) {
	for _, id := range selected(p, only) {
		root := ""
		if d, ok := cfg.Destination(id); ok {
			root = d.Path // unexpanded: placeholders need the manifest
		}
		warnUndelivered(op, a.deliver(ctx, cfg, notify.PipelineFailed(op, id, root)), id)
	}
}

// warnUndelivered warns in op of each notification of ns (for destination
// id, which op does not list) that was not sent.
func warnUndelivered(op *report.Pipeline, ns []report.Notification, id string) {
	for _, n := range ns {
		if n.Status != notify.StatusSent {
			op.Warnings = append(op.Warnings, fmt.Sprintf("notification %s (%s) for destination %s %s: %s", n.ID, n.Event, id, n.Status, n.Error))
		}
	}
}

// deliver sends ev to every subscribed notification, in configuration order.
func (a *App) deliver(ctx context.Context, cfg *config.Config, ev notify.Payload) []report.Notification {
	var targets []config.Notification
	for _, n := range cfg.Notifications {
		if slices.Contains(n.On, ev.Event) {
			targets = append(targets, n)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	log := a.Logger.With("event", ev.Event, "pipeline", ev.PipelineID, "destination", ev.DestinationID)
	body, encErr := json.Marshal(ev)
	if encErr != nil {
		encErr = fmt.Errorf("encode the notification body: %w", encErr)
	}
	// Its own http.Client (the default transport, so proxy variables apply;
	// no shared client is modified), notify's default timeout and attempts.
	sender := &notify.Sender{Client: &http.Client{}, UserAgent: "distributor/" + a.Version}
	out := make([]report.Notification, 0, len(targets))
	for _, n := range targets {
		rn := report.Notification{ID: n.ID, Event: ev.Event, Status: notify.StatusSent}
		err, secret := encErr, "" // signed with its secret_env's secret
		if n.SecretEnv != "" {
			secret = a.getenv(n.SecretEnv)
		}
		switch {
		case err != nil:
		case n.SecretEnv != "" && secret == "":
			err = fmt.Errorf("not sent: environment variable %s (webhook.secret_env) is unset or empty", n.SecretEnv)
		default:
			err = sender.Send(ctx, notify.Target{URL: n.URL, Secret: []byte(secret)}, ev.Event, body)
		}
		if err != nil {
			rn.Status, rn.Error = notify.StatusFailed, err.Error()
			log.Warn("notification failed", "notification", n.ID, "err", err)
		} else {
			log.Info("notification sent", "notification", n.ID)
		}
		out = append(out, rn)
	}
	return out
}

func (a *App) getenv(name string) string {
	if a.Getenv == nil {
		return ""
	}
	return a.Getenv(name)
}

// contentCheck keeps what a run knows of a shallow bundle's bytes, so that a
// mismatch fails every destination before any output is visible. A store that
// cannot stage (S3) hashes every file first; one that stages checks files as
// they are copied to temporary names (OpenVerified) and hashes up front only
// the rest: the bundle is read once.
type contentCheck struct {
	b        *bundle.Bundle
	verified map[string]bool // these files' bytes matched
	err      error           // the bundle is bad
}

// check verifies the files not staged and not known to match yet.
func (c *contentCheck) check(ctx context.Context, staged map[string]bool) error {
	if c.err != nil {
		return c.err
	}
	var done []string
	err := c.b.VerifyFiles(ctx, func(p string) bool {
		if c.verified[p] || staged[p] {
			return false
		}
		done = append(done, p)
		return true
	})
	switch {
	case err == nil:
		c.matched(done...)
	case ctx.Err() == nil:
		c.err = err
	}
	return err
}

func (c *contentCheck) matched(paths ...string) {
	if c.verified == nil {
		c.verified = map[string]bool{}
	}
	for _, p := range paths {
		c.verified[p] = true
	}
}

// failed marks the bundle bad when a staged write found a mismatch.
func (c *contentCheck) failed(err error) {
	var me *bundle.MismatchError
	if c.err == nil && errors.As(err, &me) {
		c.err = me
	}
}

// runDestination publishes bundle b to destination d.
func (a *App) runDestination(ctx context.Context, p *config.Pipeline, d *config.Destination, b *bundle.Bundle, vc *contentCheck, opts RunOptions) *destinationRun {
	dr := &destinationRun{a: a, p: p, d: d, b: b, vc: vc, opts: opts,
		rd: report.Destination{DestinationID: d.ID, Backend: d.Backend, Root: d.Path, FixedPath: d.FixedPath(), Workflow: d.Workflow}}
	st, err := dr.prepare(ctx)
	if st != nil {
		defer st.Close()
	}
	if err == nil {
		err = dr.publish(ctx)
		dr.root.Close() // the last read: one under the lock replaces the first
	}
	if rf, ok := err.(refusal); ok {
		dr.rd.Status, dr.rd.Err, dr.rd.Counts = report.StatusFailed, rf.error, plan.Counts{}
	} else if err != nil {
		dr.failed(err)
	}
	if st != nil {
		dr.rd.Retries = retry.Count(st)
	}
	return dr
}

// previewRecovery reads the root as a real run would after recovering a dead
// run's journal, changing nothing: txn.Recover runs over an in-memory overlay.
func previewRecovery(ctx context.Context, st storage.Store, req planRequest, now time.Time) (*RootState, *txn.Recovery, error) {
	view := overlay.New(st)
	// A lock record's intent is recovered as a journal once its holder's
	// lock is removed (lock.MoveIntent): preview it from the overlay.
	if info, _, err := lock.Read(ctx, st); err == nil && len(info.Intent) > 0 {
		if err := lock.MoveIntent(ctx, view, info); err != nil {
			return nil, nil, fmt.Errorf("preview the recovery of %s: %w", st, err)
		}
	}
	rec, err := txn.Recover(ctx, view, nil, now)
	if err != nil {
		return nil, nil, fmt.Errorf("preview the recovery of %s: %w", st, err)
	}
	if rec == nil {
		// The journal went away since it was seen (its writer finished).
		rec = &txn.Recovery{Journal: &journal.Journal{}, Committed: true}
	}
	r, err := readPlanRoot(ctx, view, req)
	if err != nil {
		return nil, nil, err
	}
	r.Store = st
	return r, rec, nil
}

func recoverySummary(rec *txn.Recovery) *report.Recovery {
	if rec == nil {
		return nil
	}
	return &report.Recovery{DeadRun: rec.Journal.RunID, Committed: rec.Committed, RolledForward: len(rec.RolledForward),
		Removed: len(rec.Removed), RemovedBytes: rec.RemovedBytes, Dropped: len(rec.Dropped), Left: len(rec.Left)}
}

// rootRecovery is what the transaction's begin (none: nil) recovered and swept.
func rootRecovery(tx *txn.Txn) report.RootRecovery {
	if tx == nil {
		return report.RootRecovery{}
	}
	rr := report.RootRecovery{Recovered: recoverySummary(tx.Recovery)}
	if len(tx.Swept) > 0 {
		rr.TempSwept = &report.Removal{Files: len(tx.Swept), Bytes: tx.SweptBytes}
	}
	return rr
}

// catalogUnchanged reports, reading no catalog bytes, whether the catalog looks
// as when r was read: absent both times, the same Version (S3's ETag), or the
// same size and modification time. A commit it misses is not lost: the catalog
// write is a compare-and-swap against r.Version. Any doubt says it changed.
func catalogUnchanged(ctx context.Context, st storage.Store, r *RootState) bool {
	const stableFor = 2 * time.Second
	info, err := st.Stat(ctx, catalog.FileName)
	if errors.Is(err, storage.ErrNotExist) && !errors.Is(err, storage.ErrNotObject) {
		return r.Version == "" && r.CatalogInfo.Path == ""
	}
	if err == nil && info.Version != "" {
		return r.Version != "" && info.Version == r.Version
	}
	if err != nil || r.Version == "" || info.Size != r.CatalogInfo.Size || !info.ModTime.Equal(r.CatalogInfo.ModTime) {
		return false
	}
	// A whole-second timestamp may come from a backend that keeps no finer
	// one, which could hide a commit in the same second with the same
	// size: trust it only if it is older than the read by stableFor.
	coarse := info.ModTime.Nanosecond() == 0
	return !coarse || info.ModTime.Before(r.ReadAt.Add(-stableFor))
}

// deleteGuard refuses a plan deleting more than max_deletes (--max-deletes),
// and a replacement planning no output that would delete (unless --allow-empty).
func deleteGuard(d *config.Destination, opts RunOptions, pl *plan.Plan, outputs int) error {
	deletes := pl.Counts().Deleted
	limit, source := -1, ""
	if d.MaxDeletes != nil {
		limit, source = *d.MaxDeletes, fmt.Sprintf("destination %s max_deletes", d.ID)
	}
	if opts.MaxDeletes != nil {
		limit, source = *opts.MaxDeletes, "--max-deletes"
	}
	if limit >= 0 && deletes > limit {
		return fmt.Errorf("delete guard: the plan would delete %d output(s), more than %s %d; nothing was changed (review with --dry-run, then raise the limit with --max-deletes %d if this is intended)",
			deletes, source, limit, deletes)
	}
	if outputs == 0 && deletes > 0 && !opts.AllowEmpty && d.Workflow == config.WorkflowReplacement {
		return fmt.Errorf("delete guard: this replacement plans no outputs but would delete %d; nothing was changed (check publish and the bundle, or rerun with --allow-empty)", deletes)
	}
	return nil
}

// openOutput opens o's bytes: compressed as they stream (z), or from memory,
// or copied from the bundle and verified against the manifest.
func openOutput(ctx context.Context, b *bundle.Bundle, o *render.Output, z *compressed) (io.ReadCloser, error) {
	switch {
	case o.Encoding != "":
		src, err := openOutput(ctx, b, o.Plain, z)
		if err != nil {
			return nil, err
		}
		return z.open(ctx, o, src), nil
	case o.Content != nil || o.Kind == render.KindGenerated:
		return seekable(o.Content), nil
	}
	return b.OpenVerified(o.SourcePath)
}

// seekable serves b so that a retried upload can start over.
func seekable(b []byte) io.ReadCloser {
	return struct {
		*bytes.Reader
		io.Closer
	}{bytes.NewReader(b), io.NopCloser(nil)}
}
