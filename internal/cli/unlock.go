package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/report"
)

func newUnlockCmd(g *globals) *cobra.Command {
	var opts distributor.UnlockOptions
	cmd := &cobra.Command{
		Use:   "unlock [--pipeline P] [--destination D] [--force]",
		Short: "Remove a destination root's lock left by a run that is gone",
		Long: `unlock removes .distributor.lock from one destination root. Writers take over
a stale lock by themselves (its lease expired, or its holder ran on this host
and the process is gone), so unlock is for the rare case you cannot wait: a
holder on another host that died with a long lease left.

Without --force it removes only a stale lock and refuses one whose holder
looks alive, naming it. With --force it removes the lock whoever holds it:
use it only when you are sure no run is active on that root (a run that
still works there would then race the next one). unlock does not repair the
root: the next writing command recovers what the dead run left, from its
intent journal.

Exit status: 0 removed, or not locked; 1 refused or failed; 2 usage or
configuration error.`,
		Example: `  distributor unlock --pipeline weather.daily --destination latest
  distributor unlock --pipeline weather.daily --destination latest --force`,
	}
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (*report.Unlock, error) {
		opts.Logger, _, _ = g.session()
		return distributor.Unlock(ctx, cfg, opts)
	}, func(rep *report.Unlock) error {
		return g.finish(rep, rep.Error != nil, func() { report.WriteUnlockText(g.env.Stdout, rep, g.width()) })
	})
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove the lock even if its holder looks alive")
	return cmd
}
