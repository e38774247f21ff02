package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite the generated part of docs/cli.md")

// Markers around the generated part of docs/cli.md. Everything outside them
// is written by hand and kept as it is.
const (
	docsBegin = "<!-- BEGIN GENERATED -->"
	docsEnd   = "<!-- END GENERATED -->"
	docsPath  = "../../docs/cli.md"
)

// docsRoot builds the command tree as the binary does, with the flags cobra
// adds at run time (--help everywhere, --version on the root).
func docsRoot() *cobra.Command {
	g := &globals{env: Env{Stdout: io.Discard, Stderr: io.Discard, Version: "dev",
		Getenv: func(string) string { return "" }, IsTerminal: func(io.Writer) bool { return false }}}
	root := newRoot(g)
	root.InitDefaultVersionFlag()
	walkCommands(root, func(c *cobra.Command) { c.InitDefaultHelpFlag() })
	return root
}

// walkCommands calls fn for c and every available (not hidden, not help)
// command below it, depth first, in cobra's (alphabetical) order.
func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && sub.Name() != "help" {
			walkCommands(sub, fn)
		}
	}
}

// renderCLIDocs renders the command reference: an index, then per command
// its summary, description, usage, examples and flags, exactly as --help
// shows them when stdout is not a terminal.
func renderCLIDocs(root *cobra.Command) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("<!-- Generated from the commands' help by TestCLIDocsInSync (internal/cli/docs_test.go).\n")
	p("     Do not edit this part: change the commands, then run\n")
	p("     go test ./internal/cli -run TestCLIDocsInSync -update -->\n\n")
	p("## Command reference\n\n")
	p("| command | summary |\n| --- | --- |\n")
	walkCommands(root, func(c *cobra.Command) {
		if c == root {
			return
		}
		p("| [`%s`](#%s) | %s |\n", c.CommandPath(), anchor(c.CommandPath()), strings.ReplaceAll(c.Short, "|", `\|`))
	})
	p("\n### Global flags\n\n")
	p("These flags apply to every command. `-h`/`--help` prints any command's help;\n")
	p("`distributor --version` prints the version.\n\n")
	p("```text\n%s```\n", root.PersistentFlags().FlagUsagesWrapped(defaultColumns))
	walkCommands(root, func(c *cobra.Command) {
		p("\n### %s\n\n", c.CommandPath())
		p("%s\n\n", c.Short)
		if c.Long != "" {
			p("```text\n%s\n```\n\n", strings.TrimRight(c.Long, "\n"))
		}
		p("Usage:\n\n```text\n")
		if c.Runnable() && !c.HasAvailableSubCommands() {
			p("%s\n", c.UseLine())
		}
		if c.HasAvailableSubCommands() {
			p("%s [command]\n", c.CommandPath())
		}
		p("```\n")
		if c.HasAvailableSubCommands() {
			p("\nCommands:\n\n")
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() && sub.Name() != "help" {
					p("- [`%s`](#%s): %s\n", sub.Name(), anchor(sub.CommandPath()), sub.Short)
				}
			}
		}
		if c.Example != "" {
			p("\nExamples:\n\n```sh\n%s\n```\n", dedent(c.Example))
		}
		if flags := withoutHelp(c.NonInheritedFlags().FlagUsagesWrapped(defaultColumns)); c != root && flags != "" {
			p("\nFlags:\n\n```text\n%s```\n", flags)
		}
	})
	return b.String()
}

// dedent removes the indentation common to every non-blank line of s.
func dedent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}

// withoutHelp drops the -h/--help line, which every command has, from flag
// usages.
func withoutHelp(usages string) string {
	var out []string
	for _, l := range strings.SplitAfter(usages, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "-h, --help ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// anchor is GitHub's heading anchor for a "### distributor x y" heading.
func anchor(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), " ", "-")
}

// spliceGenerated replaces what lies between the markers of doc with gen.
// A document without markers gets them, with gen, at its end.
func spliceGenerated(doc, gen string) (string, error) {
	block := docsBegin + "\n" + gen + docsEnd
	before, rest, ok := strings.Cut(doc, docsBegin)
	if !ok {
		if strings.Contains(doc, docsEnd) {
			return "", fmt.Errorf("%s without %s", docsEnd, docsBegin)
		}
		if doc != "" && !strings.HasSuffix(doc, "\n\n") {
			doc = strings.TrimRight(doc, "\n") + "\n\n"
		}
		return doc + block + "\n", nil
	}
	_, after, ok := strings.Cut(rest, docsEnd)
	if !ok {
		return "", fmt.Errorf("%s without %s", docsBegin, docsEnd)
	}
	if strings.Contains(after, docsBegin) {
		return "", fmt.Errorf("more than one %s", docsBegin)
	}
	return before + block + after, nil
}

// TestCLIDocsInSync checks that docs/cli.md documents every command as its
// --help does. Run with -update to rewrite the generated part; the sections
// outside the markers are kept.
func TestCLIDocsInSync(t *testing.T) {
	gen := renderCLIDocs(docsRoot())
	old, err := os.ReadFile(docsPath)
	if err != nil && !(*update && os.IsNotExist(err)) {
		t.Fatal(err)
	}
	want, err := spliceGenerated(string(old), gen)
	if err != nil {
		t.Fatalf("%s: %v", docsPath, err)
	}
	if *update {
		if want != string(old) {
			if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", filepath.Clean(docsPath))
		}
		return
	}
	if want != string(old) {
		t.Errorf("%s is out of date with the commands: run\n\tgo test ./internal/cli -run TestCLIDocsInSync -update\nfirst difference: %s",
			filepath.Clean(docsPath), firstDiff(string(old), want))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\n\thave: %q\n\twant: %q", i+1, gl, wl)
		}
	}
	return "(none)"
}

func TestSpliceGeneratedKeepsHandWrittenSections(t *testing.T) {
	doc := "# CLI\n\nintro\n\n" + docsBegin + "\nold\n" + docsEnd + "\n\n## Maintenance commands\n\nhand written\n"
	got, err := spliceGenerated(doc, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# CLI\n\nintro\n\n" + docsBegin + "\nnew\n" + docsEnd + "\n\n## Maintenance commands\n\nhand written\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	got, err = spliceGenerated("# CLI\n", "gen\n")
	if err != nil || got != "# CLI\n\n"+docsBegin+"\ngen\n"+docsEnd+"\n" {
		t.Errorf("no markers: %q, %v", got, err)
	}
	for _, bad := range []string{docsEnd, docsBegin + "x", docsBegin + docsEnd + docsBegin + docsEnd} {
		if _, err := spliceGenerated(bad, "gen\n"); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestEveryCommandDocumentsItself: every command's --help has a one-line
// summary, a description and examples, and the reference lists it.
func TestEveryCommandDocumentsItself(t *testing.T) {
	root := docsRoot()
	gen := renderCLIDocs(root)
	walkCommands(root, func(c *cobra.Command) {
		name := c.CommandPath()
		if c.Short == "" || strings.Contains(c.Short, "\n") || strings.HasSuffix(c.Short, ".") {
			t.Errorf("%s: Short must be one line without a final period: %q", name, c.Short)
		}
		if strings.TrimSpace(c.Long) == "" {
			t.Errorf("%s: no description (Long)", name)
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no examples", name)
		}
		continued := false // the line before ended with a backslash
		for _, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !continued && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "distributor") &&
				!strings.HasPrefix(line, "source <(distributor") && !strings.HasPrefix(line, "mkdir") {
				t.Errorf("%s: example line %q is neither a comment nor a distributor command", name, line)
			}
			continued = strings.HasSuffix(line, "\\")
		}
		if !strings.Contains(gen, "\n### "+name+"\n") {
			t.Errorf("%s is missing from the reference", name)
		}
		var help bytes.Buffer
		c.SetOut(&help)
		if err := c.Help(); err != nil {
			t.Errorf("%s --help: %v", name, err)
		}
	})
}

// synopses returns the command synopses of doc's text blocks: each line
// that starts with "distributor ", with the indented lines that continue
// it, keyed by the longest command path in paths it starts with.
func synopses(doc string, paths []string) map[string]string {
	out := map[string]string{}
	inText, key := false, ""
	for _, l := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			inText, key = l == "```text", ""
		case !inText:
		case strings.HasPrefix(l, "distributor "):
			key = ""
			for _, p := range paths {
				if (l == p || strings.HasPrefix(l, p+" ")) && len(p) > len(key) {
					key = p
				}
			}
			if key != "" {
				out[key] = l
			}
		case key != "" && strings.HasPrefix(l, " "):
			out[key] += " " + strings.TrimSpace(l)
		default:
			key = ""
		}
	}
	return out
}

// flagTokens returns the words of a synopsis, its brackets and bars taken
// as spaces: "[--dry-run | --apply]" has "--dry-run" and "--apply".
func flagTokens(s string) map[string]bool {
	words := strings.Fields(strings.NewReplacer("[", " ", "]", " ", "(", " ", ")", " ", "|", " ", "`", " ", ",", " ").Replace(s))
	set := map[string]bool{}
	for _, w := range words {
		set[w] = true
	}
	return set
}

// localFlags names c's own flags as "--name", without --help.
func localFlags(c *cobra.Command) []string {
	var names []string
	c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" && !f.Hidden {
			names = append(names, "--"+f.Name)
		}
	})
	return names
}

// checkSynopses fails unless doc has a synopsis for each command of want
// that lists every flag of that command, and every other synopsis it has
// lists every flag too.
func checkSynopses(t *testing.T, docName, doc string, root *cobra.Command, want func(*cobra.Command) bool) {
	t.Helper()
	cmds := map[string]*cobra.Command{}
	var paths []string
	walkCommands(root, func(c *cobra.Command) {
		if c != root {
			cmds[c.CommandPath()] = c
			paths = append(paths, c.CommandPath())
		}
	})
	found := synopses(doc, paths)
	for _, p := range paths {
		if _, ok := found[p]; !ok && want(cmds[p]) {
			t.Errorf("%s: no synopsis of %s", docName, p)
		}
	}
	for p, s := range found {
		tokens := flagTokens(s)
		for _, f := range localFlags(cmds[p]) {
			if !tokens[f] {
				t.Errorf("%s: the synopsis of %s does not list %s: %q", docName, p, f, s)
			}
		}
	}
}

// TestREADMESynopsisListsEveryFlag: the README's command synopsis names
// every runnable command with every one of its flags, and its global flags
// paragraph every global flag (as --name or -x).
func TestREADMESynopsisListsEveryFlag(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	root := docsRoot()
	checkSynopses(t, "README.md", readme, root, func(c *cobra.Command) bool {
		return c.Runnable() && !c.HasAvailableSubCommands()
	})
	_, globals, ok := strings.Cut(readme, "\nGlobal flags: ")
	if !ok {
		t.Fatal(`README.md has no "Global flags: " paragraph`)
	}
	globals, _, _ = strings.Cut(globals, "\n\n")
	tokens := flagTokens(globals)
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !tokens["--"+f.Name] && (f.Shorthand == "" || !tokens["-"+f.Shorthand]) {
			t.Errorf("README.md: the global flags paragraph does not name --%s", f.Name)
		}
	})
	if !tokens["--version"] {
		t.Error("README.md: the global flags paragraph does not name --version")
	}
}

// TestCLIDocsSynopsesListEveryFlag: the hand-written sections of
// docs/cli.md give each maintenance command a synopsis with every flag.
func TestCLIDocsSynopsesListEveryFlag(t *testing.T) {
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, _ := strings.Cut(string(data), docsBegin)
	_, after, _ := strings.Cut(rest, docsEnd)
	maintenance := map[string]bool{"distributor prune": true, "distributor reconcile-state": true,
		"distributor verify": true, "distributor state show": true}
	checkSynopses(t, docsPath, before+after, docsRoot(), func(c *cobra.Command) bool {
		return maintenance[c.CommandPath()]
	})
}
