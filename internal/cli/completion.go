package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor"
	"github.com/distributor-dev/distributor/internal/config"
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

// groupCommand makes cmd, which only groups subcommands, refuse an unknown
// subcommand (with a did-you-mean, whatever flags follow: they belong to the
// one meant) and flags without a subcommand; cmd alone prints its help.
func groupCommand(g *globals, cmd *cobra.Command) *cobra.Command {
	// Unknown flags are not errors here: the first argument that is not a
	// flag is the subcommand to blame.
	cmd.FParseErrWhitelist = cobra.FParseErrWhitelist{UnknownFlags: true}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownSubcommand(c, args[0])
		}
		if _, rest, err := c.Root().Find(g.args); err == nil && len(rest) > 0 {
			// Parse the flags again, strictly, to name an unknown one.
			fs := c.Flags()
			fs.ParseErrorsAllowlist.UnknownFlags = false
			if err := fs.Parse(rest); err != nil {
				return usageErr("%v (see '%s --help')", err, c.CommandPath())
			}
			return usageErr("%s needs a command: %s (see '%s --help')", c.CommandPath(), strings.Join(subcommandNames(c), ", "), c.CommandPath())
		}
		return c.Help()
	}
	return cmd
}

// unknownSubcommand is the usage error for a mistyped subcommand of c.
func unknownSubcommand(c *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if s := config.Closest(name, subcommandNames(c)); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	} else {
		msg += " (commands: " + strings.Join(subcommandNames(c), ", ") + ")"
	}
	return usageErr("%s (see '%s --help')", msg, c.CommandPath())
}

func subcommandNames(c *cobra.Command) []string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && sub.Name() != "help" {
			names = append(names, sub.Name())
		}
	}
	return names
}

// newHelpCmd replaces cobra's help command, which shows the nearest
// command's help for a mistyped one: an unknown command is a usage error.
func newHelpCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "help prints the help of any command, as its --help does.",
		RunE: func(c *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil {
				return usageErr("%v", err)
			}
			for _, a := range rest {
				if !strings.HasPrefix(a, "-") {
					return unknownSubcommand(target, a)
				}
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
	}
}
