package cli

import (
	"errors"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor/internal/app"
	"github.com/distributor-dev/distributor/internal/report"
)

func newValidateCmd(g *globals) *cobra.Command {
	var opts app.ValidateOptions
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the configuration (and a bundle) without touching any storage",
		Long: `validate decodes the configuration strictly and checks every rule: unknown
fields, ids and references, backend blocks, placeholders. With --source it also
validates that bundle against its manifest and plans its outputs for every
destination of the pipeline (or of every pipeline), which catches output
collisions, rename typos and template errors before a real run.

Exit status: 0 valid; 1 the bundle or its outputs are invalid; 2 the
configuration is invalid.`,
		Example: `  distributor validate
  distributor validate --config /etc/distributor/distributor.yaml
  distributor validate --pipeline weather.daily --source ./out`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				if g.output == "json" {
					// The configuration's problems are the document.
					rep := invalidConfigReport(g.configPath, err)
					if perr := g.printJSON(rep); perr != nil {
						return perr
					}
				}
				return err
			}
			rep, err := g.app().Validate(cmd.Context(), cfg, opts)
			if err != nil {
				return mapAppError(err)
			}
			return g.finish(rep, !rep.Valid, func() { report.WriteValidateText(g.env.Stdout, rep) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Pipeline, "pipeline", "", "check only this pipeline")
	f.StringVar(&opts.Source, "source", "", "also validate this bundle directory and plan its outputs")
	registerIDCompletions(g, cmd)
	return cmd
}

// invalidConfigReport is validate's document for a configuration that could
// not be loaded: not valid, with each problem of the file (or the error).
func invalidConfigReport(path string, err error) *report.Validate {
	rep := &report.Validate{Command: "validate", Config: path, Valid: false,
		Outputs: []report.ValidateOutputs{}, Problems: configProblems(err)}
	if abs, aerr := filepath.Abs(path); aerr == nil && path != "" {
		rep.Config = abs
	}
	if len(rep.Problems) == 0 {
		var ee *exitError
		if errors.As(err, &ee) {
			err = ee.err
		}
		rep.Problems = []string{err.Error()}
	}
	return rep
}
