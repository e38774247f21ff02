package cli

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// helpOf runs "distributor ARGS... --help" in-process, as the binary does,
// and returns its stdout.
func helpOf(t *testing.T, env Env, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	env.Stdout, env.Stderr = &out, &errb
	args = append(args, "--help")
	if code := Execute(context.Background(), args, env); code != ExitOK {
		t.Fatalf("distributor %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// commandArgsOf is the arguments that name c ("bundle seal").
func commandArgsOf(c *cobra.Command) []string {
	return strings.Fields(c.CommandPath())[1:]
}

// flagLine matches the first line of a flag's entry in help: the flag, its
// value name and the padding before the description.
var flagLine = regexp.MustCompile(`^(  -\S, |      )--\S+( \S+)? {2,}`)

// checkHelp fails unless every line of help fits width columns and each
// Flags/Global Flags block is one aligned table: every description (its
// wrapped lines too) starts at the block's column, and no flag states more
// than one default.
func checkHelp(t *testing.T, name, help string, width int) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(help, "\n"), "\n")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > width {
			t.Errorf("%s --help: line %d has %d columns (more than %d): %q", name, i+1, n, width, l)
		}
	}
	blocks := 0
	for i := 0; i < len(lines); i++ {
		if lines[i] != "Flags:" && lines[i] != "Global Flags:" {
			continue
		}
		blocks++
		col := 0
		var entry []string // the current flag's lines
		endEntry := func() {
			if n := strings.Count(strings.ToLower(strings.Join(entry, " ")), "default"); n > 1 {
				t.Errorf("%s --help: a flag states %d defaults:\n%s", name, n, strings.Join(entry, "\n"))
			}
			entry = nil
		}
		for i++; i < len(lines) && lines[i] != ""; i++ {
			l := lines[i]
			if m := flagLine.FindString(l); m != "" {
				endEntry()
				if col == 0 {
					col = len(m)
				}
				if len(m) != col {
					t.Errorf("%s --help: %q: description at column %d, the block's is %d", name, l, len(m), col)
				}
			} else if entry == nil || len(l)-len(strings.TrimLeft(l, " ")) != col {
				t.Errorf("%s --help: %q in %q is not a flag nor a description wrapped at column %d", name, l, lines[i-len(entry)-1], col)
			}
			entry = append(entry, l)
		}
		endEntry()
	}
	if blocks == 0 {
		t.Errorf("%s --help has no Flags: block", name)
	}
}

// TestHelpFitsEightyColumns: with stdout not a terminal (whatever $COLUMNS
// says), every command's help fits 80 columns, its flag descriptions are
// wrapped at one column per block, and no flag shows two defaults.
func TestHelpFitsEightyColumns(t *testing.T) {
	env := Env{Getenv: func(k string) string {
		if k == "COLUMNS" {
			return "200"
		}
		return ""
	}}
	n := 0
	walkCommands(docsRoot(), func(c *cobra.Command) {
		n++
		checkHelp(t, c.CommandPath(), helpOf(t, env, commandArgsOf(c)...), defaultColumns)
	})
	if n < 15 {
		t.Errorf("checked %d commands; the walk misses some", n)
	}
}

// TestHelpWrapsToTerminal: on a terminal flag descriptions use its width,
// read from the terminal, else from $COLUMNS.
func TestHelpWrapsToTerminal(t *testing.T) {
	terminal := func(io.Writer) bool { return true }
	for _, tc := range []struct {
		name    string
		width   int
		columns string
		want    int
	}{
		{"terminal width", 120, "", 120},
		{"terminal width over $COLUMNS", 100, "60", 100},
		{"$COLUMNS", 0, "100", 100},
		{"neither", 0, "", defaultColumns},
		{"narrow", 0, "10", minColumns},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{
				IsTerminal:    terminal,
				TerminalWidth: func(io.Writer) int { return tc.width },
				Getenv: func(k string) string {
					if k == "COLUMNS" {
						return tc.columns
					}
					return ""
				},
			}
			if got := helpColumns(env); got != tc.want {
				t.Errorf("helpColumns = %d, want %d", got, tc.want)
			}
			if tc.want < defaultColumns {
				return // text outside the flags is written for 80 columns
			}
			help := helpOf(t, env, "run")
			checkHelp(t, "run", help, tc.want)
			longest := 0
			for _, l := range strings.Split(help, "\n") {
				if flagLine.MatchString(l) {
					longest = max(longest, len(l))
				}
			}
			if tc.want > defaultColumns && longest <= defaultColumns {
				t.Errorf("no flag line is longer than %d columns on a %d-column terminal:\n%s", defaultColumns, tc.want, help)
			}
		})
	}
}
