package config

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
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

// yamlProblem splits a YAML syntax error into the parser's line (0: none) and message.
func yamlProblem(err error) (int, string) {
	msg := err.Error()
	if m := yamlErrRE().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// parseProblem returns the first syntax error of data's YAML documents, or "" when they parse.
func parseProblem(data []byte) string {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		switch err := dec.Decode(&n); {
		case errors.Is(err, io.EOF):
			return ""
		case err != nil:
			_, msg := yamlProblem(err)
			return msg
		}
	}
}

// maxSyntaxLines bounds the search for a syntax error's line.
const maxSyntaxLines = 1 << 16

// syntaxErrorLine returns the 1-based line where the YAML syntax error with
// message problem occurs in data, or 0 when it cannot tell.
//
// The parser reports the line where the failed construct started (counted
// from 0 or 1), often one early and sometimes several: a "[" on line 4
// missing its "]" as line 3. The line that matters is where the smallest
// prefix of whole lines that fails with the same message ends; the parser
// reads a stream, so every longer prefix fails the same way, and a binary
// search finds it.
func syntaxErrorLine(data []byte, problem string) int {
	var ends []int // ends[i]: the offset just after line i+1
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	if len(ends) == 0 || len(ends) > maxSyntaxLines {
		return 0
	}
	k := sort.Search(len(ends), func(i int) bool { return parseProblem(data[:ends[i]]) == problem })
	if k == len(ends) {
		return 0
	}
	return k + 1
}
