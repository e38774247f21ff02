package config

import (
	"errors"
	"strings"
	"testing"
)

// TestSyntaxErrorLines: a YAML syntax error is reported at the line where
// it is, not at the line before (the parser's own count), whatever kind of
// error it is.
func TestSyntaxErrorLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		line int
		msg  string
	}{
		{"tab in indentation", "pipelines:\n  - id: p\n    source: bundle\n    destinations: [site]\ndestinations:\n  - id: site\n\tbackend: local\n    path: www\n", 7, "tab character"},
		{"missing ]", "pipelines:\n  - id: p\n    source: bundle\n    destinations: [site\ndestinations:\n  - id: site\n    backend: local\n    path: www\n", 4, "did not find expected ',' or ']'"},
		{"missing } on the first line", "pipelines: [{id: p, source: b\n", 1, "did not find expected"},
		{"unclosed quote", "pipelines:\n  - id: p\n    source: \"bundle\n    destinations: [site]\n", 3, "found unexpected end of stream"},
		{"mapping value in a scalar", "pipelines:\n  - id: p\n    source: a: b\n", 3, "mapping values are not allowed"},
		{"dedented key", "pipelines:\n  - id: p\n    source: b\n   destinations: [site]\n", 4, "did not find expected"},
		{"key without colon", "pipelines:\n  - id: p\nsource x\ndestinations: []\n", 3, "could not find expected ':'"},
		{"bad second document", "pipelines: []\n---\na: [\n", 3, "did not find expected node content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.yaml), "c.yaml")
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) != 1 {
				t.Fatalf("want one problem, got %v", err)
			}
			p := ce.Problems[0]
			if p.Line != tc.line || !strings.HasPrefix(p.Msg, "invalid YAML: ") || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("got line %d %q, want line %d and a message with %q", p.Line, p.Msg, tc.line, tc.msg)
			}
		})
	}
}
