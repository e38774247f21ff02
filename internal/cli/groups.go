package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/distributor-dev/distributor/internal/config"
)

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
