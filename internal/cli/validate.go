package cli

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/report"
)

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
