package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/report"
)

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
	maintCommand(g, cmd, &opts.Root, func(ctx context.Context, cfg *distributor.Config) (*report.StateShow, error) {
		opts.Logger, _, _ = g.session()
		return distributor.ShowState(ctx, cfg, opts)
	}, func(s *report.StateShow) error {
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
	})
	return cmd
}
