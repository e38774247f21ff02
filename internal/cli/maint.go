package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage/registry"
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
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (any, error) {
		opts.Logger, _, opts.Tuning = g.session()
		return distributor.Prune(ctx, cfg, opts)
	})
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "list the outputs the policy selects; delete nothing")
	f.BoolVar(&opts.Apply, "apply", false, "delete the selected outputs and remove their records")
	return cmd
}

// maintCommand completes cmd, a maintenance command: no arguments, the
// flags every one shares (into root, part of the command's options), and a
// RunE that loads the configuration, runs use and shows its document.
func maintCommand(g *globals, cmd *cobra.Command, root *distributor.Root, use func(context.Context, *distributor.Config) (any, error)) {
	cmd.Args = noArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cfg, err := g.loadConfig()
		if err != nil {
			return err
		}
		rep, err := use(cmd.Context(), cfg)
		if err != nil {
			return mapAppError(err)
		}
		if s, ok := rep.(*report.StateShow); ok {
			return g.showState(s)
		}
		d := rep.(interface {
			report.Doc
			Failed() bool
			Err() error
		})
		// A failure because another writer held the root's lock past the wait exits 11.
		var he *distributor.LockHeldError
		if err := g.finish(d, d.Failed()); err == nil || !errors.As(d.Err(), &he) {
			return err
		}
		return errLockHeld
	}
	f := cmd.Flags()
	f.StringVar(&root.Pipeline, "pipeline", "", "the pipeline whose destination root to work on (default: the only pipeline, or the only one publishing to --destination)")
	f.StringVar(&root.Destination, "destination", "", "the destination of that pipeline (default: the pipeline's only destination)")
	f.StringVar(&root.Source, "source", "", "bundle directory whose manifest fills {source_*} placeholders of the destination path (default: the pipeline's configured source)")
	registerIDCompletions(g, cmd) // also marks --source a directory
}

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
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (any, error) {
		opts.Logger, _, opts.Tuning = g.session()
		return distributor.ReconcileState(ctx, cfg, opts)
	})
	f := cmd.Flags()
	f.BoolVar(&opts.AllOwners, "all-owners", false, "check every owner's records at the root, not just this pipeline/destination's")
	f.BoolVar(&opts.DryRun, "dry-run", false, "report; leave .distributor.json unchanged")
	return cmd
}

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
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (any, error) {
		if opts.Jobs < 0 {
			return nil, usageErr("--jobs %d: must be 1 or more", opts.Jobs)
		}
		opts.Logger, opts.OnEvent, _ = g.session()
		return distributor.Verify(ctx, cfg, opts)
	})
	cmd.Flags().BoolVar(&opts.AllOwners, "all-owners", false, "verify every owner's outputs at the root, not just this pipeline/destination's")
	cmd.Flags().BoolVar(&opts.Quick, "quick", false, "check only that each output is present with its recorded size (no content read; misses same-size changes)")
	cmd.Flags().IntVar(&opts.Jobs, "jobs", 0, "outputs read and hashed at once (default "+registry.JobsDefaults()+")")
	return cmd
}

func newStateCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Inspect a destination root's catalog (.distributor.json)",
		Long: `The state commands read the catalog .distributor.json at a destination root:
the record of every output distributor manages there, with its owner
(pipeline/destination), sha256, size and timestamps. They change nothing.
See docs/state.md for the format.`,
		Example: `  distributor state show --pipeline weather.daily --destination latest
  distributor state show --pipeline weather.daily --destination latest \
    --output json`,
	}
	cmd.AddCommand(newStateShowCmd(g))
	return groupCommand(g, cmd)
}

func newStateShowCmd(g *globals) *cobra.Command {
	var opts distributor.ShowOptions
	cmd := &cobra.Command{
		Use:   "show [--pipeline P] [--destination D] [--source DIR]",
		Short: "Print the catalog of a destination root",
		Long: `show reads .distributor.json at the root of destination D of pipeline P and
prints every output it records, whoever owns it: path, owner
(pipeline/destination), kind, size, updated_at and url, as a table that
fits the terminal (80 columns on a pipe): narrower, it leaves out the url,
numbers the owners, leaves out the kind and cuts paths in the middle, in
that order, saying so.

With --output json it prints the state document itself, exactly as stored,
or null when the root has no catalog yet (state none); when the state cannot
be shown, the error document of docs/cli.md.

Exit status: 0 shown (also for state none); 1 the root could not be read,
or its state is legacy, invalid or future (the message says which); 2 a
usage or configuration error.`,
		Example: `  distributor state show --pipeline weather.daily --destination latest
  distributor state show --pipeline weather.daily --destination latest \
    --output json | jq '.outputs[].path'`,
	}
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (any, error) {
		opts.Logger, _, _ = g.session()
		return distributor.ShowState(ctx, cfg, opts)
	})
	return cmd
}

// showState prints a catalog: text, or as JSON the stored document itself.
func (g *globals) showState(s *report.StateShow) error {
	defer s.Close()
	if g.output != "json" {
		return report.WriteStateText(g.env.Stdout, s, g.width())
	}
	out := g.stdout
	err := s.WriteRaw(out)
	if err == nil && s.State != "catalog" {
		_, err = io.WriteString(out, "null")
	}
	if err == nil && out.last != '\n' {
		_, err = io.WriteString(out, "\n")
	}
	if err != nil {
		return fmt.Errorf("write JSON output: %w", err)
	}
	return nil
}

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
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (any, error) {
		opts.Logger, _, _ = g.session()
		return distributor.Unlock(ctx, cfg, opts)
	})
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove the lock even if its holder looks alive")
	return cmd
}
