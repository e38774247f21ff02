package distributor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/distributor-dev/distributor/internal/app"
	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
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

// The inputs of the calls below, as the matching commands take them:
// selections and flags, the Logger (none when nil), OnEvent for progress
// (Run, Verify) and Tuning (the writing calls). Root selects the destination
// root a maintenance call works on: Pipeline, Destination and Source, each ""
// for the one the configuration implies.
type (
	RunOptions       = app.RunOptions
	ValidateOptions  = app.ValidateOptions
	Root             = app.Root
	PruneOptions     = app.PruneOptions
	VerifyOptions    = app.VerifyOptions
	ReconcileOptions = app.ReconcileOptions
	ShowOptions      = app.ShowOptions
	UnlockOptions    = app.UnlockOptions
)

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
	return a.Run(ctx, cfg.c, opts)
}

// Validate checks what a run needs without touching storage, as
// `distributor validate` does: overlaps, named files and variables, and each
// bundle planned against every destination. Problems make it not Valid.
func Validate(ctx context.Context, cfg *Config, opts ValidateOptions) (*ValidateReport, error) {
	return session(cfg, opts.Logger, nil, Tuning{}).Validate(ctx, cfg.c, opts)
}

// Prune applies the destination's retention.prune policy, as `distributor
// prune` does: whole publications (one source identity's outputs) older
// than the policy's age, keeping the newest ones it names.
func Prune(ctx context.Context, cfg *Config, opts PruneOptions) (*PruneReport, error) {
	return session(cfg, opts.Logger, nil, opts.Tuning).Prune(ctx, cfg.c, opts)
}

// Verify reads every managed output back from storage and compares its
// sha256 and size with its record, as `distributor verify` does; it
// writes nothing and takes no lock. rep.Failed() when an output is
// missing or corrupt, or the root has no catalog.
func Verify(ctx context.Context, cfg *Config, opts VerifyOptions) (*VerifyReport, error) {
	if opts.Jobs < 0 {
		return nil, &UsageError{Msg: "Jobs must be 0 (the backend's default) or more"}
	}
	return session(cfg, opts.Logger, opts.OnEvent, Tuning{}).Verify(ctx, cfg.c, opts)
}

// ReconcileState drops the catalog records whose file is gone and reports
// the unmanaged paths, as `distributor reconcile-state` does. It deletes
// no file and adopts nothing.
func ReconcileState(ctx context.Context, cfg *Config, opts ReconcileOptions) (*ReconcileReport, error) {
	return session(cfg, opts.Logger, nil, opts.Tuning).ReconcileState(ctx, cfg.c, opts)
}

// ShowState reads a root's catalog in constant memory, as `distributor
// state show` does: the report holds the top fields (State "none" without a
// catalog) and streams Outputs and WriteRaw from a copy of what was read (a
// temporary file if large). Call its Close when done.
func ShowState(ctx context.Context, cfg *Config, opts ShowOptions) (*StateReport, error) {
	return session(cfg, opts.Logger, nil, Tuning{}).ShowState(ctx, cfg.c, opts)
}

// Unlock removes a root's stale lock, as `distributor unlock` does (the
// next writer recovers what its holder left).
func Unlock(ctx context.Context, cfg *Config, opts UnlockOptions) (*UnlockReport, error) {
	return session(cfg, opts.Logger, nil, Tuning{}).Unlock(ctx, cfg.c, opts)
}

// The documents of the bundle commands.
type (
	SealReport         = report.BundleSeal
	BundleVerifyReport = report.BundleVerify
)

// CheckBundleID reports whether id can name a bundle: 1-128 of
// [A-Za-z0-9._-], starting with a letter or digit.
func CheckBundleID(id string) error { return bundle.ValidateID(id) }

// SealBundle hashes every regular file under dir and writes
// dir/manifest.json atomically, as `distributor bundle seal` does. Symlinks
// and names reserved for distributor (.distributor*) are refused.
func SealBundle(ctx context.Context, dir, id string, created time.Time) (*SealReport, error) {
	if err := bundle.ValidateID(id); err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("bundle id %q: %v", id, err)}
	}
	m, err := bundle.Seal(ctx, dir, id, created)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	return &report.BundleSeal{Command: "bundle seal", Dir: abs, Manifest: filepath.Join(abs, bundle.ManifestName),
		ID: m.ID, Digest: m.Digest, Created: catalog.FormatTime(m.Created), Files: len(m.Files)}, nil
}

// VerifyBundle checks dir's files and digest against its manifest, as
// `distributor bundle verify` does. Problems make the report invalid;
// unlisted files are warnings.
func VerifyBundle(ctx context.Context, dir string) *BundleVerifyReport {
	abs, _ := filepath.Abs(dir)
	rep := &report.BundleVerify{Command: "bundle verify", Dir: abs, Valid: true,
		Problems: []report.BundleProblem{}, Warnings: []string{}}
	b, err := bundle.Load(ctx, abs)
	var unlisted []string
	var ve *bundle.ValidationError
	switch {
	case errors.As(err, &ve):
		rep.Valid, rep.Hint, unlisted = false, ve.Hint, ve.Unlisted
		for _, p := range ve.Problems {
			rep.Problems = append(rep.Problems, report.BundleProblem{Path: p.Path, Reason: p.Reason})
		}
	case err != nil:
		rep.Valid = false
		rep.Problems = append(rep.Problems, report.BundleProblem{Reason: err.Error()})
	default:
		m := b.Manifest
		rep.ID, rep.Digest, rep.Created, rep.Files = m.ID, m.Digest, catalog.FormatTime(m.Created), len(m.Files)
		unlisted = b.Unlisted
	}
	// Files the manifest does not list, also beside an invalid bundle's
	// problems: one may be the file meant to be listed.
	for _, u := range unlisted {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: not listed in the manifest (ignored)", u))
	}
	return rep
}
