package cli

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

const runLong = `run publishes every pipeline of the configuration (or the one named with
--pipeline) to each of its destinations. For each destination it plans the
outputs (copied files and Markdown rendered to HTML) from the bundle's
manifest, compares them with the catalog .distributor.json (trusting the
paths it records; the root is looked at only for the other planned paths,
or listed when there is no valid catalog), and, if anything must change,
checks every bundle file against its manifest, takes the root's lock
(waiting up to --lock-timeout), writes outputs, deletes what the workflow
retires, and writes the catalog last. A run with nothing to do reads no
bundle bytes and takes no lock.

A bundle that does not match its manifest, a plan that would delete more
than max_deletes (or --max-deletes), and a replacement that plans nothing
(without --allow-empty) are refused before anything is written.

With --rewrite every planned output is written again even when its bytes
are unchanged: the way to apply changed S3 headers rules to objects already
published (the catalog records bytes, not headers, so a change of rules
alone rewrites nothing), and to repair outputs verify reports missing or
corrupt (a run trusts the catalog and does not look for them). Rewritten
outputs with unchanged bytes keep their catalog records (updated_at
included).

Writes are ordered for web readers: every output that is not an HTML page
first, then HTML pages, then the destination's primary page and archive
index; deletes come after every write and the catalog last.

Destinations are independent: one failing does not stop the others.

After each destination (never in a dry run) the webhooks configured under
notifications receive a JSON POST for the events they subscribe to:
published, skipped or failed. A notification that cannot be delivered is a
warning in the report and does not change the exit status. A webhook whose
secret_env variable is unset or empty is a configuration error, detected
before anything is published.

Exit status: 0 when every destination succeeded; 1 when a destination failed,
a plan (also a dry run) refused with fail_unmanaged or fail_conflict, or a
bundle is invalid; 2 for a usage or configuration error; 11 when the only
failures were roots whose lock another writer held past --lock-timeout (try
again later); 130 or 143 when SIGINT or SIGTERM stopped the run.

With --metrics-file PATH (or metrics_file in the configuration) each real
run writes per pipeline and destination its time, success, duration,
action, outputs by operation, bytes written, lock wait and retries, and the
time of the last success (kept by a failed run), in Prometheus text format;
destinations the run did not touch keep their series from the previous
file.`

func newRunCmd(g *globals) *cobra.Command {
	var opts distributor.RunOptions
	var pipeline string
	var maxDeletes int
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Validate bundles, plan and publish them to their destinations",
		Long:  runLong,
		Example: `  distributor run
  distributor run --pipeline weather.daily --dry-run
  distributor run --pipeline weather.daily --source /tmp/bundle --output json
  # Apply changed headers rules to what is already published:
  distributor run --destination site --rewrite
  # Replace one root whose state is invalid, after reviewing a dry run:
  distributor run --pipeline weather.daily --destination latest --dry-run \
    --force
  distributor run --pipeline weather.daily --destination latest --force`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Flag values first: a usage error is exit 2 whatever the
			// configuration says.
			if opts.Jobs < 0 {
				return usageErr("--jobs %d: use 1 or more, or 0 for the backend's default (%s)", opts.Jobs, registry.JobsDefaults())
			}
			if cmd.Flags().Changed("max-deletes") {
				if maxDeletes < 0 {
					return usageErr("--max-deletes %d: must be 0 or more", maxDeletes)
				}
				opts.MaxDeletes = &maxDeletes
			}
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			if pipeline != "" {
				opts.Pipelines = []string{pipeline}
			}
			// --metrics-file wins over metrics_file; --metrics-file '' writes none.
			if !cmd.Flags().Changed("metrics-file") {
				opts.MetricsFile = cfg.MetricsFile()
			}
			opts.Logger, opts.OnEvent, opts.Tuning = g.session()
			rep, err := distributor.Run(cmd.Context(), cfg, opts)
			if err != nil {
				return mapAppError(err)
			}
			err = g.finish(rep, rep.Failed())
			if err != nil && rep.LockHeld {
				return errLockHeld
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&pipeline, "pipeline", "", "publish only this pipeline")
	f.StringVar(&opts.Destination, "destination", "", "publish only to this destination")
	f.StringVar(&opts.Source, "source", "", "publish this bundle directory instead of the pipeline's source (needs --pipeline when more than one pipeline is configured)")
	f.BoolVar(&opts.DryRun, "dry-run", false, "plan and report; write nothing")
	f.BoolVar(&opts.Force, "force", false, "replace everything under one destination root (needs --pipeline and --destination)")
	f.IntVar(&maxDeletes, "max-deletes", 0, "abort before any change if a destination's plan deletes more than this many outputs (overrides max_deletes)")
	f.IntVar(&opts.Jobs, "jobs", 0, "transfers at once per destination; 0 is the backend's default ("+registry.JobsDefaults()+")")
	f.BoolVar(&opts.AllowEmpty, "allow-empty", false, "let a replacement that plans no outputs delete this owner's outputs")
	f.StringVar(&opts.MetricsFile, "metrics-file", "", "after the run (never a dry run), write its metrics to this file in Prometheus text format, replacing it atomically (for node_exporter's textfile collector: name it *.prom); overrides metrics_file, '' writes none")
	f.BoolVar(&opts.Rewrite, "rewrite", false, "write every planned output even when unchanged (re-applies S3 headers rules)")
	registerIDCompletions(g, cmd)
	return cmd
}

func newValidateCmd(g *globals) *cobra.Command {
	var opts distributor.ValidateOptions
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the configuration (and a bundle); touches no storage",
		Long: `validate decodes the configuration strictly and checks every rule: unknown
fields, ids and references, backend blocks, placeholders. Without touching any
storage, it then checks what a run of the selected pipelines needs:

  - destinations of one pipeline at the same root whose outputs overlap (a
    problem: each run takes the outputs over from the other, and neither can
    skip); roots nested in one another (a warning);
  - files the configuration names: sftp identity_file and known_hosts_file,
    markdown.template (which must also parse) (problems when missing);
  - the webhook secret_env variables (a problem when unset or empty: run
    exits 2);
  - each pipeline's source directory (a warning when missing: producers
    often write it just before the run).

It then validates each pipeline's configured source bundle against its
manifest and plans its outputs for every destination of the pipeline,
which catches rename typos, outputs that collide within a destination, and
the exact output paths two destinations of a pipeline would both publish.
A source that exists but cannot be loaded (not sealed yet, or being
written) is a note, not a problem: the run reads it at its own time. With
--source, that bundle is checked and planned instead, for every selected
pipeline, and one that cannot be loaded is a problem.

Exit status: 0 valid (warnings allowed); 1 a problem: the bundle or its
outputs are invalid, destinations overlap, or this host lacks a file or
variable the configuration needs; 2 the configuration is invalid.`,
		Example: `  distributor validate
  distributor validate --config /etc/distributor/distributor.yaml
  distributor validate --pipeline weather.daily --source ./out`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				if g.output == "json" {
					// The configuration's problems are the document.
					rep := &report.Validate{Command: "validate", Config: g.configPath, Outputs: []report.ValidateOutputs{}, Problems: configProblems(err)}
					if abs, aerr := filepath.Abs(g.configPath); aerr == nil && g.configPath != "" {
						rep.Config = abs
					}
					if len(rep.Problems) == 0 {
						rep.Problems = []string{err.Error()} // an *exitError's is its cause's
					}
					if perr := g.printJSON(rep); perr != nil {
						return perr
					}
				}
				return err
			}
			opts.Logger, _, _ = g.session()
			rep, err := distributor.Validate(cmd.Context(), cfg, opts)
			if err != nil {
				return mapAppError(err)
			}
			return g.finish(rep, !rep.Valid)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Pipeline, "pipeline", "", "check only this pipeline")
	f.StringVar(&opts.Source, "source", "", "validate and plan this bundle directory instead of the pipelines' configured sources")
	registerIDCompletions(g, cmd)
	return cmd
}
