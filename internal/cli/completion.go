package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
)

// completionShells are the shells `distributor completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// newCompletionCmd returns the completion command, which replaces cobra's
// default one, and registers value completions for root's global flags.
func newCompletionCmd(g *globals, root *cobra.Command) *cobra.Command {
	fixed := func(flag string, values ...string) {
		_ = root.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
	fixed("output", "text", "json")
	fixed("log-level", "debug", "info", "warn", "error")
	fixed("progress", "auto", "always", "never")
	_ = root.MarkPersistentFlagFilename("config", "yaml", "yml")
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `completion prints a script that makes the shell complete distributor's
commands, flags and flag values: --output, --log-level and --progress values,
--config files, and --pipeline and --destination ids read from the
configuration (the one --config names, else $DISTRIBUTOR_CONFIG, else
./distributor.yaml).

bash needs the bash-completion package (v2). For zsh, completion must be
enabled (autoload -U compinit; compinit) in ~/.zshrc. Start a new shell after
installing a script.`,
		Example: `  # bash, for the current user (needs bash-completion v2)
  mkdir -p ~/.local/share/bash-completion/completions
  distributor completion bash \
    > ~/.local/share/bash-completion/completions/distributor

  # bash, in the current shell only
  source <(distributor completion bash)

  # zsh: a directory listed in $fpath
  distributor completion zsh > "${fpath[1]}/_distributor"

  # fish
  distributor completion fish > ~/.config/fish/completions/distributor.fish`,
		ValidArgs:             completionShells,
		DisableFlagsInUseLine: true,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usageErr("completion needs a shell name: bash, zsh, fish or powershell")
			case len(args) > 1 || !slices.Contains(completionShells, args[0]):
				return usageErr("completion takes one shell name: bash, zsh, fish or powershell, not %q", strings.Join(args, " "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			write := map[string]func(io.Writer) error{
				"bash":       func(w io.Writer) error { return root.GenBashCompletionV2(w, true) },
				"zsh":        root.GenZshCompletion,
				"fish":       func(w io.Writer) error { return root.GenFishCompletion(w, true) },
				"powershell": root.GenPowerShellCompletionWithDesc,
			}[args[0]]
			if err := write(g.env.Stdout); err != nil {
				return fmt.Errorf("write the %s completion script: %w", args[0], err)
			}
			return nil
		},
	}
}

// registerIDCompletions completes cmd's --pipeline and --destination with the
// configuration's ids (nothing when it cannot be loaded).
func registerIDCompletions(g *globals, cmd *cobra.Command) {
	complete := func(flag string, ids func(*distributor.Config) []string) {
		if cmd.Flags().Lookup(flag) == nil {
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cfg, err := g.loadConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return ids(cfg), cobra.ShellCompDirectiveNoFileComp
		})
	}
	complete("pipeline", func(c *distributor.Config) (ids []string) {
		for _, p := range c.Pipelines() {
			ids = append(ids, p.ID)
		}
		return ids
	})
	complete("destination", func(c *distributor.Config) (ids []string) {
		for _, d := range c.Destinations() {
			ids = append(ids, d.ID)
		}
		return ids
	})
	if cmd.Flags().Lookup("source") != nil {
		_ = cmd.MarkFlagDirname("source")
	}
}
