package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// versionDoc is the document `distributor version --output json` prints.
type versionDoc struct {
	Command string `json:"command"`
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version (like --version)",
		Long: `version prints what 'distributor --version' prints: the module version and,
when the binary was built from a checkout, the VCS revision. With --output
json it prints {"command": "version", "version": ..., "commit": ...}.`,
		Example: `  distributor version
  distributor version --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.show(versionDoc{Command: "version", Version: g.env.Version, Commit: g.env.Commit}, func() {
				fmt.Fprintf(g.env.Stdout, "distributor %s\n", versionString(g.env))
			})
		},
	}
}

// versionString is the version and, when known, the commit.
func versionString(env Env) string {
	v := env.Version
	if env.Commit != "" {
		v += " (commit " + env.Commit + ")"
	}
	return v
}
