package cli

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
)

// countingWriter counts bytes written, so Execute knows whether a command
// printed its document, and keeps the last (state show ends its line).
type countingWriter struct {
	w    io.Writer
	n    int64
	last byte
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if n > 0 {
		c.last = p[n-1]
	}
	return n, err
}

// ErrorDocument is what --output json prints for a command that fails before it
// has a document of its own (docs/cli.md, "JSON output").
type ErrorDocument struct {
	Command string `json:"command"` // as typed after "distributor", e.g. "bundle seal"
	// Error is the message also printed on stderr (a network failure in
	// brief); ErrorDetail is the whole error with every cause.
	Error       string   `json:"error"`
	ErrorDetail string   `json:"error_detail"`
	ExitStatus  int      `json:"exit_status"` // 2 for a usage or configuration error, 1 otherwise
	Problems    []string `json:"problems"`    // an invalid configuration's config.Error.Messages
}

// errorDocument describes err, which made the command args name exit code.
func errorDocument(root *cobra.Command, args []string, code int, err error) ErrorDocument {
	doc := ErrorDocument{ExitStatus: code, Problems: configProblems(err)}
	if c, _, ferr := root.Find(args); ferr == nil && c != nil {
		doc.Command = strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), root.Name()), " ")
	}
	var ee *exitError
	if errors.As(err, &ee) {
		doc.Error, doc.ErrorDetail = report.Brief(ee.err), ee.err.Error()
	} else if err != nil {
		doc.Error, doc.ErrorDetail = err.Error(), err.Error()
	}
	return doc
}

// configProblems lists the problems of an invalid configuration, or none.
func configProblems(err error) []string {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return []string{}
	}
	return ce.Messages()
}

// wantsJSON reports whether the command line asked for --output json, also
// when parsing stopped before that flag was reached.
func wantsJSON(parsed string, args []string) bool {
	if parsed == "json" {
		return true
	}
	want := false
	for i, a := range args {
		switch {
		case a == "--":
			return want
		case a == "--output=json":
			want = true
		case strings.HasPrefix(a, "--output="):
			want = false
		case a == "--output" && i+1 < len(args):
			want = args[i+1] == "json"
		}
	}
	return want
}

var unknownFlagRE = regexp.MustCompile(`^unknown (?:shorthand )?flag: '?-{0,2}([^' ]+)'?`)

// flagHint suggests what a mistyped flag probably meant, or returns "".
func flagHint(c *cobra.Command, err error) string {
	m := unknownFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	name := m[1]
	if name == "json" || name == "text" {
		return "did you mean --output " + name + "?"
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := config.Closest(name, names); s != "" {
		return "did you mean --" + s + "?"
	}
	return ""
}

// flagValueMessage says what a flag given a value it cannot parse takes,
// without the parser's wording (strconv.ParseBool: ...), or returns "".
func flagValueMessage(err error) string {
	var ie *pflag.InvalidValueError
	if !errors.As(err, &ie) {
		return ""
	}
	f := ie.GetFlag()
	switch f.Value.Type() {
	case "bool":
		return fmt.Sprintf("--%s takes true or false, not %q (--%s alone means true)", f.Name, ie.GetValue(), f.Name)
	case "duration":
		return fmt.Sprintf("--%s takes a duration such as 90s, 2m or 1h30m, not %q", f.Name, ie.GetValue())
	case "int":
		return fmt.Sprintf("--%s takes a whole number, not %q", f.Name, ie.GetValue())
	}
	return ""
}
