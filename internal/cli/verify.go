package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

func newVerifyCmd(g *globals) *cobra.Command {
	var opts distributor.VerifyOptions
	cmd := &cobra.Command{
		Use:   "verify [--pipeline P] [--destination D] [--quick]",
		Short: "Re-hash managed outputs and compare them with the catalog",
		Long: `verify is a read-only bitrot check. It streams every output of pipeline P at
destination D (with --all-owners, every output recorded at that root) from
storage, and compares its sha256 and size with its record in
.distributor.json. It reports how many are ok, which are missing and which
are corrupt (expected and actual sha256 and size). It writes nothing and
takes no lock.

Outputs are read and hashed --jobs at a time (default: the backend's, as for
run); the report is the same whatever the number, in path order.
On a terminal a progress bar shows the outputs checked and the bytes read
(see --progress).

--quick reads no content: from the one listing of the root verify takes
anyway, it checks that each output is present with its recorded size. It
finds missing, truncated and grown files, but NOT a change that keeps the
size (bitrot, an in-place edit of the same length): its "ok" means present
with the right size, not intact. Use it for a frequent cheap check and run
a full verify regularly.

Exit status: 0 every checked output is intact (also when the catalog
records none of the owner's, which the report says); 1 an output is missing
or corrupt, the root has no catalog (a mistyped path must not look healthy),
the root could not be read, or its state is legacy, invalid or future; 2 a
usage or configuration error.`,
		Example: `  distributor verify --pipeline weather.daily --destination latest
  distributor verify --pipeline weather.daily --destination latest \
    --all-owners --output json
  distributor verify --pipeline weather.daily --destination latest --quick
  distributor verify --pipeline weather.daily --destination archive --jobs 16`,
	}
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (*report.Verify, error) {
		if opts.Jobs < 0 {
			return nil, usageErr("--jobs %d: must be 1 or more", opts.Jobs)
		}
		opts.Logger, opts.OnEvent, _ = g.session()
		return distributor.Verify(ctx, cfg, opts)
	}, func(rep *report.Verify) error {
		return g.finish(rep, rep.Failed(), func() { report.WriteVerifyText(g.env.Stdout, rep, g.width()) })
	})
	cmd.Flags().BoolVar(&opts.AllOwners, "all-owners", false, "verify every owner's outputs at the root, not just this pipeline/destination's")
	cmd.Flags().BoolVar(&opts.Quick, "quick", false, "check only that each output is present with its recorded size (no content read; misses same-size changes)")
	cmd.Flags().IntVar(&opts.Jobs, "jobs", 0, "outputs read and hashed at once (default "+registry.JobsDefaults()+")")
	return cmd
}
