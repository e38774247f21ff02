package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/report"
)

func newPruneCmd(g *globals) *cobra.Command {
	var opts distributor.PruneOptions
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune --dry-run|--apply [--pipeline P] [--destination D]",
		Short: "Delete the reports an owner's retention.prune policy selects",
		Long: `prune applies the destination's retention.prune policy to the publications
of pipeline P at destination D: the outputs it publishes there under one
source identity (bundle id, digest, created), that is one report. A
publication is selected whole when all its outputs have an updated_at older
than older_than, and never when it is among the owner's keep_min newest (by
the bundle's created, ties broken by id). A report goes whole or not at all.

--dry-run lists the selected publications and their paths, and changes
nothing. --apply rebuilds the destination's archive index and feed so they
no longer link them, deletes their files, removes from .distributor.json
exactly the records of the files it deleted, and updates the catalog's
updated_at. One of the two is required.

prune never deletes unmanaged files, outputs of other pipelines or
destinations, or .distributor.json itself. A destination path with
{source_*} placeholders takes them from the manifest of the pipeline's
configured source, or of --source DIR.

Exit status: 0 done (also when nothing is selected); 1 a delete or the
catalog write failed, or the root's state is legacy, invalid or future;
2 a usage error, or the destination has no retention.prune policy.`,
		Example: `  distributor prune --pipeline weather.daily --destination archive --dry-run
  distributor prune --pipeline weather.daily --destination archive --apply
  distributor prune --pipeline weather.daily --destination archive --apply \
    --output json`,
		PreRunE: func(*cobra.Command, []string) error {
			if dryRun == opts.Apply {
				return usageErr("prune needs exactly one of --dry-run (list what would be deleted) or --apply (delete it)")
			}
			return nil
		},
	}
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (*report.Prune, error) {
		opts.Logger, _, opts.Tuning = g.session()
		return distributor.Prune(ctx, cfg, opts)
	}, func(rep *report.Prune) error {
		return lockHeldStatus(g.finish(rep, rep.Failed(), func() { report.WritePruneText(g.env.Stdout, rep, g.width()) }), rep.Cause)
	})
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "list the outputs the policy selects; delete nothing")
	f.BoolVar(&opts.Apply, "apply", false, "delete the selected outputs and remove their records")
	return cmd
}

// maintCommand completes cmd, a maintenance command: no arguments, the
// flags every one shares (into root, part of the command's options), and a
// RunE that loads the configuration, runs use and shows its report.
func maintCommand[R any](g *globals, cmd *cobra.Command, root *distributor.Root,
	use func(context.Context, *distributor.Config) (R, error), show func(R) error) {
	cmd.Args = noArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cfg, err := g.loadConfig()
		if err != nil {
			return err
		}
		rep, err := use(cmd.Context(), cfg)
		if err != nil {
			return mapMaintError(err)
		}
		return show(rep)
	}
	f := cmd.Flags()
	f.StringVar(&root.Pipeline, "pipeline", "", "the pipeline whose destination root to work on (default: the only pipeline, or the only one publishing to --destination)")
	f.StringVar(&root.Destination, "destination", "", "the destination of that pipeline (default: the pipeline's only destination)")
	f.StringVar(&root.Source, "source", "", "bundle directory whose manifest fills {source_*} placeholders of the destination path (default: the pipeline's configured source)")
	registerIDCompletions(g, cmd) // also marks --source a directory
}

// lockHeldStatus is err, a printed report's status, but ExitLocked when it
// failed because another writer held the root's lock past the wait (cause).
func lockHeldStatus(err, cause error) error {
	var he *distributor.LockHeldError
	if err != nil && errors.As(cause, &he) {
		return errLockHeld
	}
	return err
}

// mapMaintError maps a maintenance use case's error before a report: invalid
// options and configuration exit 2, a command's own error stays, else exit 1.
func mapMaintError(err error) error {
	var ee *exitError
	var ce *distributor.ConfigError
	switch {
	case errors.As(err, &ee):
		return err // the command's own
	case errors.As(err, &ce):
		return &exitError{code: ExitUsage, err: err}
	}
	return mapAppError(err)
}
