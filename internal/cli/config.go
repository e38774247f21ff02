package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
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

func newBundleCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Write and check source bundles (a directory and its manifest)",
		Long: `A source bundle is a directory holding manifest.json and the files it lists,
each with its sha256 and size. Producers write one with 'bundle seal' (or by
hand, see docs/bundle.md) and check it with 'bundle verify'.`,
		Example: `  distributor bundle seal ./out --id weather.tomorrow
  distributor bundle verify ./out`,
	}
	cmd.AddCommand(newBundleSealCmd(g), newBundleVerifyCmd(g))
	return groupCommand(g, cmd)
}

func newBundleSealCmd(g *globals) *cobra.Command {
	var id, created string
	cmd := &cobra.Command{
		Use:   "seal DIR --id ID [--created RFC3339]",
		Short: "Write DIR/manifest.json listing every regular file under DIR",
		Long: `seal hashes every regular file under DIR (except manifest.json) and writes
DIR/manifest.json atomically, with the bundle id, its creation time (default:
now, UTC) and the digest of the file list. Symlinks and names reserved for
distributor (.distributor*) are refused.`,
		Example: `  distributor bundle seal ./out --id weather.tomorrow
  distributor bundle seal ./out --id weather.tomorrow \
    --created 2026-06-19T12:00:00Z`,
		Args: oneDir("bundle seal takes exactly one DIR argument, got %d (see 'distributor bundle seal --help')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if id == "" {
				return usageErr("bundle seal needs --id (the bundle id, e.g. weather.tomorrow)")
			}
			if err := distributor.CheckBundleID(id); err != nil {
				return usageErr("--id %q: %v", id, err)
			}
			t := time.Now().UTC()
			if created != "" {
				var err error
				if t, err = time.Parse(time.RFC3339, created); err != nil {
					return usageErr("--created %q is not an RFC3339 time like 2026-06-19T12:00:00Z", created)
				}
				if y := t.UTC().Year(); y < 0 || y > 9999 {
					return usageErr("--created %q: year outside 0000-9999", created)
				}
			}
			rep, err := distributor.SealBundle(cmd.Context(), args[0], id, t)
			if err != nil {
				return &exitError{code: ExitFailed, err: err}
			}
			return g.finish(rep, false)
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "bundle id: 1-128 of [A-Za-z0-9._-], starting with a letter or digit (required)")
	cmd.Flags().StringVar(&created, "created", "", "creation time, RFC3339 (default now, UTC)")
	return cmd
}

func newBundleVerifyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "verify DIR",
		Short: "Check a bundle against its manifest (exit 0 valid, 1 problems)",
		Long: `verify parses DIR/manifest.json and checks every listed file: it exists as a
regular file (not a symlink) with the listed size and sha256, and the manifest
digest matches the file list. Every problem is listed with its file. Files in
DIR that the manifest does not list are reported as warnings.`,
		Example: `  distributor bundle verify ./out
  distributor bundle verify ./out --output json`,
		Args: oneDir("bundle verify takes exactly one DIR argument, got %d"),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep := distributor.VerifyBundle(cmd.Context(), args[0])
			return g.finish(rep, !rep.Valid)
		},
	}
}

// oneDir accepts one argument; format words the usage error, with the count.
func oneDir(format string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageErr(format, len(args))
		}
		return nil
	}
}
