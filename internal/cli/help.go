package cli

import (
	"strconv"
	"strings"
)

// Help is wrapped to the terminal's width when stdout is a terminal, else
// to defaultColumns; never narrower than minColumns.
const (
	defaultColumns = 80
	minColumns     = 40
)

// helpColumns is the width help text is wrapped to: on a terminal its
// width (env.TerminalWidth, else $COLUMNS), otherwise defaultColumns, so
// that help piped to a file or a pager is the same everywhere.
func helpColumns(env Env) int {
	if env.IsTerminal == nil || !env.IsTerminal(env.Stdout) {
		return defaultColumns
	}
	n := 0
	if env.TerminalWidth != nil {
		n = env.TerminalWidth(env.Stdout)
	}
	if n <= 0 && env.Getenv != nil {
		n, _ = strconv.Atoi(strings.TrimSpace(env.Getenv("COLUMNS")))
	}
	if n <= 0 {
		return defaultColumns
	}
	return max(n, minColumns)
}

// helpColumns is the width of this command line's help.
func (g *globals) helpColumns() int {
	if g.columns == 0 {
		return defaultColumns
	}
	return g.columns
}
