package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor/internal/config"
)

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Helpers for writing distributor.yaml",
		Long: `config groups helpers for the configuration file. To check a configuration,
use 'distributor validate'.`,
		Example: `  distributor config schema > distributor.schema.json`,
		Args:    noArgs,
	}
	cmd.AddCommand(newConfigSchemaCmd(g))
	return groupCommand(g, cmd)
}

func newConfigSchemaCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of distributor.yaml (for editors)",
		Long: `schema prints the JSON Schema (draft 2020-12) of the configuration file on
stdout, whatever --output says. Editors use it to validate distributor.yaml as
you type and to complete and document its fields: every field with its
description, enums, patterns and defaults; unknown and legacy fields are
errors, and the sftp and s3 blocks are required exactly with their backend.

Rules a schema cannot express (references between ids, unique ids, rename
keys that exist in the bundle) are still checked only by 'distributor
validate'.

With the VS Code YAML extension (or any editor using yaml-language-server),
save the schema next to the configuration and point to it from the first
line of distributor.yaml:

  # yaml-language-server: $schema=./distributor.schema.json

or map it in the editor settings ("yaml.schemas").`,
		Example: `  distributor config schema > distributor.schema.json
  distributor config schema | jq '."$defs".destination.properties | keys'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := g.env.Stdout.Write(config.Schema()); err != nil {
				return fmt.Errorf("write the schema: %w", err)
			}
			return nil
		},
	}
}
