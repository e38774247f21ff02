package cli

import (
	"strconv"
	"strings"
)

const (
	defaultColumns = 80
	minColumns     = 40
)

// helpColumns is the width help and text reports fit: a terminal's (else
// $COLUMNS; at least minColumns), otherwise defaultColumns, so that output
// piped to a file is the same everywhere.
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

// width is the width of this command line's help and text reports.
func (g *globals) width() int {
	if g.columns == 0 {
		return defaultColumns
	}
	return g.columns
}
