package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor/internal/atomicfile"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
)

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Helpers for writing distributor.yaml",
		Long: `config groups helpers for the configuration file: 'config init' writes a
commented starter configuration, 'config schema' prints its JSON Schema. To
check a configuration, use 'distributor validate'.`,
		Example: `  distributor config init
  distributor config schema > distributor.schema.json`,
	}
	cmd.AddCommand(newConfigInitCmd(g), newConfigSchemaCmd(g))
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
errors, and each backend's block is required exactly with its backend.

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

func newConfigInitCmd(g *globals) *cobra.Command {
	var path string
	var force bool
	cmd := &cobra.Command{
		Use:   "init [--path FILE] [--force]",
		Short: "Write a commented starter configuration (local backend)",
		Long: `init writes a commented starter configuration: one pipeline publishing the
bundle in ./out to the local directory ./public, with remote backends'
alternatives and a webhook as comments. 'distributor validate' accepts it as
written (warning that ./out does not exist until a bundle is written there).

It writes to --path, else to the file other commands read (--config, else
$DISTRIBUTOR_CONFIG, else ./distributor.yaml), creating its directory if
needed. An existing file is never overwritten without --force.

Exit status: 0 written; 1 the file could not be written; 2 the file exists
(without --force) or a usage error.`,
		Example: `  distributor config init
  distributor config init --path /etc/distributor/distributor.yaml
  distributor config init --force`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if path == "" {
				p, err := config.Resolve(g.config, g.env.Getenv)
				if err != nil {
					return usageErr("%v", err)
				}
				path = p
			}
			_, err := os.Lstat(path)
			exists := err == nil
			if exists && !force {
				return usageErr("%s already exists: pass --force to replace it with the starter configuration", path)
			}
			if exists || errors.Is(err, fs.ErrNotExist) {
				err = os.MkdirAll(filepath.Dir(path), 0o755)
			}
			if err == nil {
				err = atomicfile.Write(path, ".distributor-config-*", []byte(config.Starter))
			}
			if err != nil {
				return &exitError{code: ExitFailed, err: fmt.Errorf("config init: %w", err)}
			}
			abs, _ := filepath.Abs(path)
			return g.finish(&report.ConfigInit{Command: "config init", Path: abs, Replaced: exists, Named: path}, false)
		},
	}
	cmd.Flags().StringVar(&path, "path", "", "file to write (default: --config, else $DISTRIBUTOR_CONFIG, else ./distributor.yaml)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing file")
	return cmd
}
