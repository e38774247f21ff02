package config

import (
	"strconv"
	"strings"
)

// Problem is one thing wrong with a configuration file.
type Problem struct {
	// Line is the 1-based line of the offending YAML node, or 0 when no line
	// applies (for example an empty file).
	Line int
	// Field is the path of the offending field, such as
	// "destinations[1].sftp.port" or "pipelines[0]". It is "" for problems
	// with the document as a whole.
	Field string
	// Msg says what is wrong, and where possible how to fix it.
	Msg string
}

// Error is returned by Decode and Load for an invalid configuration. It holds
// every problem found, sorted by line. Use errors.As to get at it.
type Error struct {
	// File names the configuration file as it was given to Decode or Load.
	File string
	// Problems holds at least one problem.
	Problems []Problem
}

// Error is Messages, one per line.
func (e *Error) Error() string { return strings.Join(e.Messages(), "\n") }

// Messages formats each problem as "file:line: field: msg" (the line is
// omitted when unknown, the field when empty).
func (e *Error) Messages() []string {
	file := e.File
	if file == "" {
		file = "config"
	}
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
