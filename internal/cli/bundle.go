package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
)

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
