package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/distributor-dev/distributor/internal/cli"
)

// Text reports fit 80 columns (a terminal's width on a terminal), so
// their long lines wrap where a temporary directory's length decides.
// Tests that read messages whole run the CLI on stdout as on a terminal
// wide enough for any line (wide); the tests below check the fitting
// itself, at 80 columns.

// wideColumns is the width of the terminal wide pretends stdout is.
const wideColumns = 1 << 16

// wide returns env with its stdout taken for a terminal of wideColumns
// (stderr is not one: no progress display).
func wide(env cli.Env) cli.Env {
	stdout := env.Stdout
	env.IsTerminal = func(w io.Writer) bool { return w == stdout }
	env.TerminalWidth = func(io.Writer) int { return wideColumns }
	return env
}

// destinationError returns the error of the first destination in the
// document of run --output json.
func destinationError(t *testing.T, out []byte) string {
	t.Helper()
	var doc runDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("run --output json: %v\n%s", err, out)
	}
	if len(doc.Pipelines) == 0 || len(doc.Pipelines[0].Destinations) == 0 || doc.Pipelines[0].Destinations[0].Error == nil {
		t.Fatalf("no destination error in:\n%s", out)
	}
	return *doc.Pipelines[0].Destinations[0].Error
}

// wrappedContains reports whether the text report out holds s, where any
// run of white space in either, line breaks included, matches any other:
// the report wraps its lines at 80 columns.
func wrappedContains(out, s string) bool {
	return strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(s), " "))
}

// widthWS is a workspace with long-ish names: two pipelines whose bundles
// hold deep paths publish to one root under a long path, with a
// retention policy and a templated archive root.
type widthWS struct {
	dir, conf, root string
	bundles         [2]string
}

const widthConfig = `pipelines:
  - id: weatherreporter.regional-forecasts
    source: %[1]s/srv/spool/weatherreporter/regional-forecasts/tomorrow-bundle
    destinations: [shared-regional-forecasts]
  - id: weatherreporter.national-overview
    source: %[1]s/srv/spool/weatherreporter/national-overview/tomorrow-bundle
    destinations: [shared-national-overview]
destinations:
  - id: shared-regional-forecasts
    backend: local
    path: %[1]s/srv/www/reports.example.com/weather/regional-and-national/shared
    workflow: additive
    paths: {prefix: "regional/", rename: {report.md: index.md}}
    links: {base_url: "https://reports.example.com/weather/regional-and-national/shared/"}
    retention: {prune: {older_than: 1s, keep_min: 0}}
  - id: shared-national-overview
    backend: local
    path: %[1]s/srv/www/reports.example.com/weather/regional-and-national/shared
    paths: {prefix: "national/"}
    links: {base_url: "https://reports.example.com/weather/regional-and-national/shared/"}
`

func newWidthWS(t *testing.T) *widthWS {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &widthWS{dir: dir, conf: filepath.Join(dir, "distributor.yaml"),
		root: filepath.Join(dir, "srv/www/reports.example.com/weather/regional-and-national/shared")}
	writeFiles(t, dir, map[string]string{"distributor.yaml": fmt.Sprintf(widthConfig, dir)})
	for i, name := range []string{"regional-forecasts", "national-overview"} {
		w.bundles[i] = filepath.Join(dir, "srv/spool/weatherreporter", name, "tomorrow-bundle")
		writeFiles(t, w.bundles[i], map[string]string{
			"report.md": "# Tomorrow\n\nSee the [chart](2026/06/19/northern-highlands/temperature-anomalies-compared-to-climatology.svg).\n",
			"2026/06/19/northern-highlands/temperature-anomalies-compared-to-climatology.svg": `<svg xmlns="http://www.w3.org/2000/svg"/>` + "\n",
			"2026/06/19/northern-highlands/precipitation-totals-by-station-and-hour.csv":      "station,hour,mm\n",
		})
		if code, out, errs := execText(t, 0, "bundle", "seal", w.bundles[i], "--id", "weatherreporter."+name+".tomorrow", "--created", "2026-06-19T12:00:00Z"); code != 0 {
			t.Fatalf("bundle seal: exit %d\n%s%s", code, out, errs)
		}
	}
	return w
}

// execText runs the CLI in-process as the binary runs on a pipe (width
// 0: 80 columns) or on a terminal of width columns.
func execText(t *testing.T, width int, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := cli.Env{Stdout: &stdout, Stderr: &stderr, Version: "test", Getenv: func(string) string { return "" }}
	if width > 0 {
		env = wide(env)
		env.TerminalWidth = func(io.Writer) int { return width }
	}
	code := cli.Execute(context.Background(), args, env)
	return code, stdout.String(), stderr.String()
}

// checkFits fails for each line of out longer than width runes.
func checkFits(t *testing.T, what string, width int, out string) {
	t.Helper()
	if out == "" {
		t.Errorf("%s: no output", what)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > width {
			t.Errorf("%s: a line of %d runes, more than %d:\n%s\nin:\n%s", what, n, width, l, out)
		}
	}
}

// widthStep is one command of TestTextFits80Columns: its exit status, lines
// its text holds whole (the layout), and text it holds however wrapped.
type widthStep struct {
	name  string
	args  []string
	code  int
	lines []string
	text  []string
}

// check runs the step at 80 columns.
func (s widthStep) check(t *testing.T) {
	t.Helper()
	code, out, errs := execText(t, 0, s.args...)
	if code != s.code {
		t.Fatalf("%s: exit %d, want %d\n%s%s", s.name, code, s.code, out, errs)
	}
	checkFits(t, s.name, 80, out)
	for _, l := range s.lines {
		if !strings.Contains("\n"+out, "\n"+l+"\n") {
			t.Errorf("%s: no line %q in:\n%s", s.name, l, out)
		}
	}
	for _, x := range s.text {
		if !wrappedContains(out, x) {
			t.Errorf("%s: no %q in:\n%s", s.name, x, out)
		}
	}
}

// Issue "operator experience, round four", point 13: command output was
// wider than a terminal (state show 167 columns, run --dry-run 135, prune
// --dry-run 115, verify's hints 89-103). Every command's text fits 80
// columns on a pipe, long paths and all: labels keep their values, lists
// keep one line per path (cut in the middle), prose wraps, the state table
// leaves out the url and numbers the owners.
func TestTextFits80Columns(t *testing.T) {
	w := newWidthWS(t)
	c := func(args ...string) []string { return append(args, "--config", w.conf) }
	regional := func(args ...string) []string {
		return c(append(args, "--pipeline", "weatherreporter.regional-forecasts")...)
	}
	for _, s := range []widthStep{
		{"validate", c("validate"), 0, []string{"  weatherreporter.regional-forecasts.tomorrow",
			"  sha256:e9bb0b7cd3497eeb583466cf018fc6f65b21537a91f77f33b66b18a5c66235ec"}, nil},
		{"validate --source", c("validate", "--source", w.bundles[0]), 0, []string{"source weatherreporter.regional-forecasts.tomorrow"}, nil},
		{"bundle verify", []string{"bundle", "verify", w.bundles[0]}, 0, []string{
			"  digest sha256:e9bb0b7cd3497eeb583466cf018fc6f65b21537a91f77f33b66b18a5c66235ec"}, nil},
		{"verify, no catalog", regional("verify"), 1, nil, []string{"FAILED: no catalog (.distributor.json) found at /tmp/",
			"which is empty or does not exist: nothing is managed there, so there is nothing to verify; did you mean another path?"}},
		{"run --dry-run", c("run", "--dry-run"), 0, []string{
			"  source   weatherreporter.regional-forecasts.tomorrow",
			"           (created 2026-06-19T12:00:00Z)",
			"  destination shared-regional-forecasts",
			"    (local, additive, fixed path)",
			"    create     regional/2026/06/19/northern…tals-by-station-and-hour.csv  (16 B)",
			"    create     regional/2026/06/19/northern…-compared-to-climatology.svg  (42 B)",
			"    url https://reports.example.com/weather…-national/shared/regional/index.html",
			"2 destination(s), 0 failed (dry run, nothing was written): 6 created, 0",
			"  overwritten, 0 unchanged, 0 deleted",
		}, nil},
		{"run", c("run"), 0, nil, nil},
		{"state show", regional("state", "show"), 0, []string{
			"  owner 1: weatherreporter.national-overview/shared-national-overview",
			"  owner 2: weatherreporter.regional-forecasts/shared-regional-forecasts",
			"  left out to fit 80 columns: URL (--output json has them)",
			"PATH                             OWNER  KIND       SIZE     UPDATED",
		}, nil},
		{"unlock", regional("unlock"), 0, []string{"  not locked: nothing to do"}, nil},
	} {
		s.check(t)
	}

	// Problems: a corrupt and a missing output, an unmanaged file, an
	// invalid bundle, a mistyped rename.
	time.Sleep(1100 * time.Millisecond) // older than older_than
	writeFiles(t, w.root, map[string]string{
		"robots-for-the-regional-and-national-forecasts.txt":                                  "User-agent: *\n",
		"regional/2026/06/19/northern-highlands/precipitation-totals-by-station-and-hour.csv": "station,hour,mm\nbroken\n",
	})
	if err := os.Remove(filepath.Join(w.root, "national/2026/06/19/northern-highlands/precipitation-totals-by-station-and-hour.csv")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, w.bundles[1], map[string]string{"report.md": "# Tomorrow, edited\n"})
	for _, s := range []widthStep{
		{"prune --dry-run", regional("prune", "--dry-run"), 0, []string{
			"  policy   publications older than 1s, never the 0 newest",
			"    publication weatherreporter.regional-forecasts.tomorrow: 3 output(s)",
			"      would delete regional/2026/06/19/northern-h…totals-by-station-and-hour.csv",
		}, nil},
		{"verify --all-owners", regional("verify", "--all-owners"), 1, []string{
			"    found    sha256:a6b01cef0c4a041714ff…b429fc2050c9b9a7cddd4f1ba7cb (23 bytes)",
			"  corrupt: restore the file, or `distributor run --rewrite` writes it again",
		}, []string{"missing: `distributor run --rewrite` writes again every output its bundle still produces (a plain run trusts " +
			"the catalog and does not look for recorded files); `distributor reconcile-state` drops the records of the others"}},
		{"verify --quick", regional("verify", "--all-owners", "--quick"), 1, []string{"    found    23 bytes (content not read: --quick)"}, nil},
		{"reconcile-state --dry-run", c("reconcile-state", "--pipeline", "weatherreporter.national-overview", "--dry-run"), 0, []string{
			"    unmanaged  robots-for-the-regional-and-national-forecasts.txt",
		}, nil},
		{"prune --apply", regional("prune", "--apply"), 0, nil, nil},
		{"run, an invalid bundle", c("run", "--dry-run"), 1, nil, []string{"report.md: size 19 does not match manifest size"}},
		{"validate, an invalid bundle", c("validate"), 0, nil, []string{"note: pipeline weatherreporter.national-overview: the configured source could not be loaded"}},
		{"bundle verify, invalid", []string{"bundle", "verify", w.bundles[1]}, 1, nil, nil},
	} {
		s.check(t)
	}
	if err := os.WriteFile(w.conf, []byte(strings.Replace(fmt.Sprintf(widthConfig, w.dir), "report.md: index.md", "reprot.md: index.md", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range []widthStep{
		{"validate, a mistyped rename", c("validate"), 1, nil, []string{`"reprot.md" is not a file of the bundle; did you mean "report.md"?`}},
		{"run, a mistyped rename", regional("run", "--dry-run"), 1, nil, []string{`"reprot.md" is not a file of the bundle; did you mean "report.md"?`}},
	} {
		s.check(t)
	}
}

// On a terminal the text fits its width: wide enough, the state table
// keeps every column whole.
func TestTextFitsTerminalWidth(t *testing.T) {
	w := newWidthWS(t)
	if code, out, errs := execText(t, 0, "run", "--config", w.conf); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	args := []string{"state", "show", "--config", w.conf, "--pipeline", "weatherreporter.regional-forecasts"}
	_, out, _ := execText(t, 400, args...)
	checkFits(t, "state show on 400 columns", 400, out)
	if !strings.Contains(out, "PATH  ") || !strings.Contains(out, "  URL\n") || strings.Contains(out, "left out") ||
		!strings.Contains(out, "https://reports.example.com/weather/regional-and-national/shared/regional/index.html\n") {
		t.Errorf("state show on 400 columns does not show every column whole:\n%s", out)
	}
	_, out, _ = execText(t, 60, args...)
	checkFits(t, "state show on 60 columns", 60, out)
}

// The JSON documents do not depend on the width.
func TestJSONIndependentOfWidth(t *testing.T) {
	w := newWidthWS(t)
	regional := []string{"--config", w.conf, "--pipeline", "weatherreporter.regional-forecasts"}
	if code, out, errs := execText(t, 0, "run", "--config", w.conf, "--pipeline", "weatherreporter.national-overview"); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	for _, args := range [][]string{
		append([]string{"run", "--dry-run"}, regional...),
		append([]string{"validate"}, regional...),
		append([]string{"verify"}, regional...),
		append([]string{"state", "show"}, regional...),
		append([]string{"reconcile-state", "--dry-run"}, regional...),
		{"bundle", "verify", w.bundles[0]},
	} {
		args = append(args, "--output", "json")
		_, narrow, _ := execText(t, 0, args...)
		_, wideOut, _ := execText(t, 500, args...)
		if a, b := withoutTimes(t, narrow), withoutTimes(t, wideOut); a != b {
			t.Errorf("%v: the document at 80 columns differs from the one at 500:\n%s\n%s", args, narrow, wideOut)
		}
	}
}

// withoutTimes returns the JSON document doc without the times of a run.
func withoutTimes(t *testing.T, doc string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "started_at")
		delete(m, "finished_at")
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
