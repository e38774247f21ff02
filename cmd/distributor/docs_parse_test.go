package main

// The Markdown side of TestDocs (docs_test.go): finding the shell sessions
// of a document, comparing what the binary printed with what the document
// shows, and writing the real output back with -update.

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// docStep is one thing a document's test does, in document order: a hidden
// setup comment (script holds its testscript lines: "<!-- docs-test: what
// for", then a line each, then "-->") or one command of a ```console block
// with the output the document shows for it.
type docStep struct {
	file   string   // the document, relative to the repository
	line   int      // 1-based line of the "$ " command or of the comment
	script []string // a <!-- docs-test --> comment's lines
	cmd    string   // the command as written, continuation lines joined
	want   []string // the output lines shown, without the block's indentation
	status int      // the exit status shown ("[exit status N]"), else 0
	// The output's lines in the file, [from, to), 0-based, status line
	// included, and the block's indentation: what -update replaces.
	from, to int
	indent   string
}

var (
	fenceLine    = regexp.MustCompile("^(\\s*)(```+)\\s*([\\w-]*)")
	illustrative = regexp.MustCompile(`^\s*<!-- illustrative: \S.* -->\s*$`)
	statusLine   = regexp.MustCompile(`^\[exit status (\d+)\]$`)
)

// shellInfo lists the info strings of fenced blocks that hold shell input.
var shellInfo = []string{"console", "sh", "shell", "bash"}

// parseDoc returns the steps of the document file (its lines), and a
// problem for each shell block that neither runs nor says why not.
func parseDoc(file string, lines []string) (steps []docStep, problems []string) {
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if body, ok := strings.CutPrefix(trimmed, "<!-- docs-test"); ok {
			start := i
			var script []string
			for ; ; i++ {
				text := strings.TrimSpace(lines[i])
				if i == start {
					text = strings.TrimSpace(strings.TrimPrefix(body, ":"))
				}
				text, end := strings.CutSuffix(text, "-->")
				if text = strings.TrimSpace(text); text != "" && i == start {
					text = "# " + text // what the steps are for
				}
				if text != "" {
					script = append(script, text)
				}
				if end || i == len(lines)-1 {
					break
				}
			}
			steps = append(steps, docStep{file: file, line: start + 1, script: script})
			continue
		}
		m := fenceLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence, info := m[1], m[2], m[3]
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != fence {
			end++
		}
		body := make([]string, 0, end-i-1)
		for _, l := range lines[i+1 : min(end, len(lines))] {
			body = append(body, strings.TrimPrefix(l, indent))
		}
		shown := i > 0 && illustrative.MatchString(lines[prevNonBlank(lines, i)])
		switch {
		case shown:
		case info == "console":
			s, p := parseSession(file, body, i+1, indent)
			steps, problems = append(steps, s...), append(problems, p...)
		case slices.Contains(shellInfo, info) || slices.ContainsFunc(body, isCommand):
			problems = append(problems, fmt.Sprintf("%s:%d: a shell block that is not a ```console session "+
				"(which TestDocs runs) and not marked <!-- illustrative: why -->", file, i+1))
		}
		i = end
	}
	return steps, problems
}

func prevNonBlank(lines []string, i int) int {
	for i--; i > 0 && strings.TrimSpace(lines[i]) == ""; i-- {
	}
	return i
}

func isCommand(l string) bool { return strings.HasPrefix(l, "$ ") }

// parseSession splits a ```console block (body, its first line at index
// first of the file) into commands and their output.
func parseSession(file string, body []string, first int, indent string) (steps []docStep, problems []string) {
	for k := 0; k < len(body); {
		if !isCommand(body[k]) {
			problems = append(problems, fmt.Sprintf("%s:%d: console output before the first \"$ \" command", file, first+k+1))
			k++
			continue
		}
		step := docStep{file: file, line: first + k + 1, indent: indent}
		cmd := strings.TrimPrefix(body[k], "$ ")
		for k++; strings.HasSuffix(cmd, "\\") && k < len(body); k++ {
			cmd = strings.TrimSuffix(cmd, "\\") + strings.TrimSpace(body[k])
		}
		step.cmd, step.from = cmd, first+k
		for ; k < len(body) && !isCommand(body[k]); k++ {
			step.want = append(step.want, body[k])
		}
		step.to = first + k
		if n := len(step.want); n > 0 {
			if m := statusLine.FindStringSubmatch(step.want[n-1]); m != nil {
				step.status, _ = strconv.Atoi(m[1])
				step.want = step.want[:n-1]
			}
		}
		steps = append(steps, step)
	}
	return steps, problems
}

// shellWords splits a command line as a shell would, for the little the
// documents use: words, '...' and "..." quoting, \ escapes, and $NAME or
// ${NAME} expanded by getenv outside single quotes.
func shellWords(line string, getenv func(string) string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, word.String()), false
				word.Reset()
			}
			continue
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", line)
			}
			word.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			j := strings.IndexByte(line[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unterminated \" in %q", line)
			}
			word.WriteString(os.Expand(line[i+1:i+1+j], getenv))
			i += j + 1
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
		case c == '$':
			j := i + 1
			for j < len(line) && (line[j] == '_' || line[j] == '{' || line[j] == '}' ||
				'A' <= line[j] && line[j] <= 'Z' || 'a' <= line[j] && line[j] <= 'z' || '0' <= line[j] && line[j] <= '9') {
				j++
			}
			word.WriteString(os.Expand(line[i:j], getenv))
			i = j - 1
		default:
			word.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// timestamp is an RFC 3339 time as the reports print them.
var timestamp = regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b`)

// docClock says which printed times are the clock's (a moment of the run,
// or a cutoff derived from it) rather than fixed by the inputs.
type docClock struct {
	start time.Time     // when the script started
	shift time.Duration // the real clock minus the documents' (docs-clock), or 0
}

// matches reports whether the printed time got stands for the documented
// want: equal, or, without a docs-clock, a moment of the run (any time
// shown will do), or, with one, a time of the run (or derived from one)
// within two minutes of want once shifted to the documents' clock.
func (c docClock) matches(got, want string) bool {
	if got == want {
		return true
	}
	g, err1 := time.Parse(time.RFC3339, got)
	w, err2 := time.Parse(time.RFC3339, want)
	if err1 != nil || err2 != nil {
		return false
	}
	if c.shift != 0 {
		d := c.toDocs(got)
		return d != got && timestamp.MatchString(d) && mustTime(d).Sub(w).Abs() <= 2*time.Minute
	}
	return !g.Before(c.start.Add(-2*time.Minute)) && !g.After(time.Now().Add(2*time.Minute))
}

func mustTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

// toDocs is the printed time t on the documents' clock: shifted if that
// brings it nearer their now (a time of the run, or derived from one, as
// a cutoff), as it is otherwise (a time fixed by the inputs).
func (c docClock) toDocs(t string) string {
	g, err := time.Parse(time.RFC3339, t)
	if err != nil || c.shift == 0 {
		return t
	}
	now := c.start.Add(-c.shift)
	if g.Add(-c.shift).Sub(now).Abs() < g.Sub(now).Abs() {
		return g.Add(-c.shift).UTC().Format(time.RFC3339)
	}
	return t
}

// compareOutput compares the normalised output got with the lines shown
// (blank lines at the end of either do not count).
// exactWrap is false when normalising changed the length of some text (a
// path of another length wraps the report elsewhere): runs of white space,
// line breaks included, then compare equal. It returns whether they match
// and the lines -update writes: got, with the documented time wherever the
// printed one matches it, else the printed one on the documents' clock.
func compareOutput(want []string, got string, clock docClock, exactWrap bool) (bool, []string) {
	wantText := strings.TrimRight(strings.Join(want, "\n"), "\n")
	got = strings.TrimRight(got, "\n")
	wantTimes := timestamp.FindAllString(wantText, -1)
	gotTimes := timestamp.FindAllString(got, -1)
	ok := len(wantTimes) == len(gotTimes)
	n := 0
	update := timestamp.ReplaceAllStringFunc(got, func(g string) string {
		defer func() { n++ }()
		if n < len(wantTimes) && clock.matches(g, wantTimes[n]) {
			return wantTimes[n]
		}
		ok = false
		return clock.toDocs(g)
	})
	mask := func(s string) string { return timestamp.ReplaceAllString(s, "YYYY-MM-DDTHH:MM:SSZ") }
	a, b := mask(wantText), mask(got)
	if !exactWrap {
		a, b = strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " ")
	}
	if got == "" {
		return ok && a == b, nil
	}
	return ok && a == b, strings.Split(update, "\n")
}

// firstDifference is the index of the first line where want and got differ.
func firstDifference(want, got []string) int {
	for i := range want {
		if i >= len(got) || want[i] != got[i] {
			return i
		}
	}
	return len(want)
}

// rewriteDoc replaces the output of each step in outputs (by index into
// steps) in the document path with the new lines, and writes it back.
func rewriteDoc(path string, steps []docStep, outputs map[int][]string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	idx := make([]int, 0, len(outputs))
	for i := range outputs {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range slices.Backward(idx) {
		s := steps[i]
		var repl []string
		for _, l := range outputs[i] {
			repl = append(repl, strings.TrimRight(s.indent+l, " "))
		}
		lines = slices.Replace(lines, s.from, s.to, repl...)
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
}
