package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/report"
)

func newReconcileCmd(g *globals) *cobra.Command {
	var opts distributor.ReconcileOptions
	cmd := &cobra.Command{
		Use:   "reconcile-state [--pipeline P] [--destination D]",
		Short: "Drop records of files that are gone; report unmanaged files",
		Long: `reconcile-state repairs .distributor.json after files were deleted behind
distributor's back. It checks the records of pipeline P at destination D (or,
with --all-owners, every record at that root) against a listing of the root,
drops the records whose file is missing, and rewrites the catalog.

It also reports unmanaged paths: files in storage that no record holds
(distributor's own .distributor* files excepted). It leaves them alone.

It deletes no file, adopts nothing, checks no digest (that is 'verify') and
never rewrites legacy, invalid or future state. --dry-run reports and leaves
the catalog byte-for-byte unchanged.

Exit status: 0 done (also when nothing was missing); 1 the catalog could not
be read or written, or the root's state is legacy, invalid or future; 2 a
usage or configuration error.`,
		Example: `  distributor reconcile-state --pipeline weather.daily --destination latest \
    --dry-run
  distributor reconcile-state --pipeline weather.daily --destination latest
  distributor reconcile-state --pipeline weather.daily --destination latest \
    --all-owners`,
	}
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (*report.ReconcileState, error) {
		opts.Logger, _, opts.Tuning = g.session()
		return distributor.ReconcileState(ctx, cfg, opts)
	}, func(rep *report.ReconcileState) error {
		return lockHeldStatus(g.finish(rep, rep.Failed(), func() { report.WriteReconcileText(g.env.Stdout, rep, g.width()) }), rep.Cause)
	})
	f := cmd.Flags()
	f.BoolVar(&opts.AllOwners, "all-owners", false, "check every owner's records at the root, not just this pipeline/destination's")
	f.BoolVar(&opts.DryRun, "dry-run", false, "report; leave .distributor.json unchanged")
	return cmd
}
