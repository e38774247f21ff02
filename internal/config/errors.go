package config

import (
	"cmp"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a configuration file.
type Problem struct {
	Line  int    // 1-based, or 0 when no line applies (an empty file)
	Field string // such as "destinations[1].sftp.port"; "" for the whole document
	Msg   string // what is wrong, and where possible how to fix it
}

// Error is Decode's and Load's for an invalid configuration: every problem, sorted by line.
type Error struct {
	File     string    // as given to Decode or Load
	Problems []Problem // at least one
}

// Error is Messages, one per line.
func (e *Error) Error() string { return strings.Join(e.Messages(), "\n") }

// Messages formats each problem as "file:line: field: msg".
func (e *Error) Messages() []string {
	file := cmp.Or(e.File, "config")
	msgs := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		m := file
		if p.Line > 0 {
			m += ":" + strconv.Itoa(p.Line)
		}
		if p.Field != "" {
			m += ": " + p.Field
		}
		msgs = append(msgs, m+": "+p.Msg)
	}
	return msgs
}
