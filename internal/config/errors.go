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

// maxSyntaxLines bounds the search for a syntax error's line.
const maxSyntaxLines = 1 << 16

// yamlError reports data's YAML syntax error err at the line where it is.
//
// The parser reports the line where the failed construct started (counted
// from 0 or 1), often one early and sometimes several: a "[" on line 4
// missing its "]" as line 3. The line that matters is where the smallest
// prefix of whole lines that fails with the same message ends; the parser
// reads a stream, so every longer prefix fails the same way, and a binary
// search finds it. When it cannot, the parser's line stays.
func (d *decoder) yamlError(data []byte, err error) {
	line, msg := yamlProblem(err)
	ends, end := []int{}, 0 // ends[i]: the offset just after line i+1
	for l := range bytes.Lines(data) {
		end += len(l)
		ends = append(ends, end)
	}
	fails := func(i int) bool { // whether the first i+1 lines fail with msg
		dec := yaml.NewDecoder(bytes.NewReader(data[:ends[i]]))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); errors.Is(err, io.EOF) {
				return msg == ""
			} else if err != nil {
				_, m := yamlProblem(err)
				return m == msg
			}
		}
	}
	if len(ends) <= maxSyntaxLines {
		if k := sort.Search(len(ends), fails); k < len(ends) {
			line = k + 1
		}
	}
	d.add(line, "", "invalid YAML: %s", msg)
}
