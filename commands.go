package distributor

import (
	"context"
	"errors"
	"log/slog"

	"github.com/distributor-dev/distributor/internal/app"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/metrics"
	"github.com/distributor-dev/distributor/internal/outcome"
	"github.com/distributor-dev/distributor/internal/report"
)

// The documents the commands return (spec section 8, docs/cli.md): the
// JSON the command line prints with --output json, field for field.
type (
	RunReport       = report.Run
	ValidateReport  = report.Validate
	PruneReport     = report.Prune
	VerifyReport    = report.Verify
	ReconcileReport = report.ReconcileState
	StateReport     = report.StateShow
	UnlockReport    = report.Unlock
)

// StateOutput is one output a catalog records, as StateReport.Outputs
// streams them (docs/state.md).
type StateOutput = catalog.Output

// RunOptions are the inputs of Run, as `distributor run` takes them.
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
	// AllowEmpty lets a replacement that plans no outputs delete the owner's.
	AllowEmpty bool
	// Jobs is how many transfers run at once per destination (0: default).
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

// Run publishes the selected pipelines to their destinations, independently,
// as `distributor run` does. Webhooks are called after each destination of a
// real run; an unset secret_env is a *UsageError before anything is
// published (a dry run only warns).
func Run(ctx context.Context, cfg *Config, opts RunOptions) (*RunReport, error) {
	a := session(cfg, opts.Logger, opts.OnEvent, opts.Tuning)
	if err := a.CheckNotifications(cfg.c); err != nil {
		if !opts.DryRun {
			return nil, err
		}
		a.Logger.Warn("notifications are not ready: a real run would exit 2", "err", err)
	}
	ao := app.RunOptions{Destination: opts.Destination, Source: opts.Source, DryRun: opts.DryRun, Force: opts.Force,
		MaxDeletes: opts.MaxDeletes, AllowEmpty: opts.AllowEmpty, Jobs: opts.Jobs, Rewrite: opts.Rewrite}
	if len(opts.Pipelines) > 1 && (opts.Source != "" || opts.Force) {
		return nil, &UsageError{Msg: "Source and Force need exactly one pipeline"}
	}
	var o *outcome.Run
	for i := 0; i == 0 || i < len(opts.Pipelines); i++ {
		if len(opts.Pipelines) > 0 {
			ao.Pipeline = opts.Pipelines[i]
		}
		one, err := a.Publish(ctx, cfg.c, ao)
		if err != nil {
			return nil, err
		}
		if o == nil {
			o = one
		} else {
			o.Pipelines, o.FinishedAt = append(o.Pipelines, one.Pipelines...), one.FinishedAt
		}
	}
	if opts.MetricsFile != "" && !opts.DryRun {
		if err := metrics.Write(opts.MetricsFile, a.Version, metrics.FromRun(o, selected(cfg.c, opts.Destination))); err != nil {
			a.Logger.Warn("the metrics file was not written (the run's exit status is unchanged)", "err", err)
		}
	}
	rep := report.RunOf(o)
	rep.LockHeld = onlyLockHeld(o)
	return rep, nil
}

// selected lists a pipeline's destinations that the filter only ("": all) selects.
func selected(cfg *config.Config, only string) func(string) []string {
	return func(pipeline string) []string {
		p, ok := cfg.Pipeline(pipeline)
		if !ok {
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
}

// onlyLockHeld reports whether the run failed only on roots other writers held past the lock timeout.
func onlyLockHeld(o *outcome.Run) bool {
	held := false
	for _, p := range o.Pipelines {
		if p.Err != nil {
			return false
		}
		for _, d := range p.Destinations {
			if d.Plan != nil && d.Plan.Action.Failed() {
				return false
			}
			if d.Status != outcome.Failed {
				continue
			}
			var he *lock.HeldError
			if !errors.As(d.Err, &he) {
				return false
			}
			held = true
		}
	}
	return held
}

// ValidateOptions are the inputs of Validate.
type ValidateOptions struct {
	// Pipeline checks only this pipeline ("" every one).
	Pipeline string
	// Source checks this bundle directory instead of the configured sources.
	Source string
	Logger *slog.Logger
}

// Validate checks what a run needs without touching storage, as
// `distributor validate` does: overlaps, named files and variables, and each
// bundle planned against every destination. Problems make it not Valid.
func Validate(ctx context.Context, cfg *Config, opts ValidateOptions) (*ValidateReport, error) {
	return session(cfg, opts.Logger, nil, Tuning{}).Validate(ctx, cfg.c,
		app.ValidateOptions{Pipeline: opts.Pipeline, Source: opts.Source})
}

// Root selects the destination root a maintenance call works on: Pipeline,
// Destination and Source, each "" for the one the configuration implies.
type Root = app.MaintOptions

// PruneOptions are the inputs of Prune.
type PruneOptions struct {
	Root
	// Apply deletes the selected publications (otherwise only listed).
	Apply  bool
	Logger *slog.Logger
	Tuning
}

// Prune applies the destination's retention.prune policy, as `distributor
// prune` does: whole publications (one source identity's outputs) older
// than the policy's age, keeping the newest ones it names.
func Prune(ctx context.Context, cfg *Config, opts PruneOptions) (*PruneReport, error) {
	return session(cfg, opts.Logger, nil, opts.Tuning).Prune(ctx, cfg.c,
		app.PruneOptions{MaintOptions: opts.Root, Apply: opts.Apply})
}

// VerifyOptions are the inputs of Verify.
type VerifyOptions struct {
	Root
	// AllOwners verifies every owner's outputs at the root.
	AllOwners bool
	// Jobs is how many outputs are read and hashed at once (0: default).
	Jobs int
	// Quick checks only each output's listed size, reading no content.
	Quick   bool
	Logger  *slog.Logger
	OnEvent func(Event)
}

// Verify reads every managed output back from storage and compares its
// sha256 and size with its record, as `distributor verify` does; it
// writes nothing and takes no lock. rep.Failed() when an output is
// missing or corrupt, or the root has no catalog.
func Verify(ctx context.Context, cfg *Config, opts VerifyOptions) (*VerifyReport, error) {
	if opts.Jobs < 0 {
		return nil, &UsageError{Msg: "Jobs must be 0 (the backend's default) or more"}
	}
	return session(cfg, opts.Logger, opts.OnEvent, Tuning{}).Verify(ctx, cfg.c,
		app.VerifyOptions{MaintOptions: opts.Root, AllOwners: opts.AllOwners, Jobs: opts.Jobs, Quick: opts.Quick})
}

// ReconcileOptions are the inputs of ReconcileState.
type ReconcileOptions struct {
	Root
	// AllOwners checks every owner's records, not just the selected one's.
	AllOwners bool
	// DryRun reports without rewriting the catalog.
	DryRun bool
	Logger *slog.Logger
	Tuning
}

// ReconcileState drops the catalog records whose file is gone and reports
// the unmanaged paths, as `distributor reconcile-state` does. It deletes
// no file and adopts nothing.
func ReconcileState(ctx context.Context, cfg *Config, opts ReconcileOptions) (*ReconcileReport, error) {
	return session(cfg, opts.Logger, nil, opts.Tuning).ReconcileState(ctx, cfg.c,
		app.ReconcileOptions{MaintOptions: opts.Root, AllOwners: opts.AllOwners, DryRun: opts.DryRun})
}

// ShowOptions are the inputs of ShowState.
type ShowOptions struct {
	Root
	Logger *slog.Logger
}

// ShowState reads a root's catalog in constant memory, as `distributor
// state show` does: the report holds the top fields (State "none" without a
// catalog) and streams Outputs and WriteRaw from a copy of what was read (a
// temporary file if large). Call its Close when done.
func ShowState(ctx context.Context, cfg *Config, opts ShowOptions) (*StateReport, error) {
	return session(cfg, opts.Logger, nil, Tuning{}).ShowState(ctx, cfg.c, opts.Root)
}

// UnlockOptions are the inputs of Unlock.
type UnlockOptions struct {
	Root
	// Force removes a lock whose holder looks alive.
	Force  bool
	Logger *slog.Logger
}

// Unlock removes a root's stale lock, as `distributor unlock` does (the
// next writer recovers what its holder left).
func Unlock(ctx context.Context, cfg *Config, opts UnlockOptions) (*UnlockReport, error) {
	return session(cfg, opts.Logger, nil, Tuning{}).Unlock(ctx, cfg.c,
		app.UnlockOptions{MaintOptions: opts.Root, Force: opts.Force})
}
