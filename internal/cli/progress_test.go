package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// progressProject writes and seals a bundle of four files (one of them
// empty) and a configuration publishing it to two local destinations.
func progressProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"report.md":  "# Report\n\nSunny.\n",
		"methods.md": "# Methods\n",
		"data.csv":   strings.Repeat("1,2,3\n", 500),
		"empty.txt":  "",
	}
	if err := os.MkdirAll(filepath.Join(dir, "bundle"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, "bundle", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "distributor.yaml")
	yaml := `pipelines:
  - {id: weather.daily, source: bundle, destinations: [latest, archive]}
destinations:
  - {id: latest, backend: local, path: www/latest, publish: {source: all}}
  - {id: archive, backend: local, path: www/archive}
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := progressRun(t, false, nil, "bundle", "seal", filepath.Join(dir, "bundle"), "--id", "weather.tomorrow",
		"--created", "2026-06-19T12:00:00Z"); code != 0 {
		t.Fatalf("seal: %d %s", code, stderr)
	}
	return cfg
}

// progressRun runs the CLI in-process with stderr reported as a terminal
// or not, and returns its exit status, stdout and stderr.
func progressRun(t *testing.T, terminal bool, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Execute(context.Background(), args, Env{Stdout: &stdout, Stderr: &stderr, Version: "v0.0.0-test",
		Getenv:     func(k string) string { return env[k] },
		IsTerminal: func(w io.Writer) bool { return terminal && w == io.Writer(&stderr) }})
	return code, stdout.String(), stderr.String()
}

// oneJSONDocument fails unless s is exactly one JSON document.
func oneJSONDocument(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not a JSON document: %v\n%s", err, s)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout has more than one JSON document:\n%s", s)
	}
	return doc
}

func TestProgressNotShownOnNonTerminal(t *testing.T) {
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			cfg := progressProject(t)
			code, stdout, stderr := progressRun(t, false, nil, "run", "--config", cfg, "--output", output)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			if stderr != "" {
				t.Errorf("--progress auto on a non-terminal wrote to stderr:\n%q", stderr)
			}
			if output == "json" {
				oneJSONDocument(t, stdout)
			}
		})
	}
}

func TestProgressNever(t *testing.T) {
	cfg := progressProject(t)
	code, stdout, stderr := progressRun(t, true, nil, "run", "--config", cfg, "--progress", "never", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if stderr != "" {
		t.Errorf("--progress never on a terminal wrote to stderr:\n%q", stderr)
	}
	oneJSONDocument(t, stdout)
}

func TestProgressDumbTerminal(t *testing.T) {
	cfg := progressProject(t)
	code, stdout, stderr := progressRun(t, true, map[string]string{"TERM": "dumb"}, "run", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if stderr != "" {
		t.Errorf("--progress auto with TERM=dumb wrote to stderr:\n%q", stderr)
	}
}

func TestProgressAlwaysOnNonTerminal(t *testing.T) {
	cfg := progressProject(t)
	code, stdout, stderr := progressRun(t, false, nil, "run", "--config", cfg, "--progress", "always", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	doc := oneJSONDocument(t, stdout)
	if s := fmt.Sprint(doc["summary"]); !strings.Contains(s, "failed:0") {
		t.Errorf("summary %s", s)
	}
	if strings.Contains(stdout, "files") {
		t.Errorf("progress on stdout:\n%s", stdout)
	}
	// latest copies all 4 files and renders 2 pages; archive renders the 2
	// pages and copies the 2 non-Markdown files.
	for _, want := range []string{"weather.daily -> latest", "6/6 files", "weather.daily -> archive", "4/4 files", "done"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "\x1b") {
		t.Errorf("escape sequences on a non-terminal:\n%q", stderr)
	}

	// Nothing to write: no bar.
	code, stdout, stderr = progressRun(t, false, nil, "run", "--config", cfg, "--progress", "always", "--output", "json")
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s%s", code, stdout, stderr)
	}
	oneJSONDocument(t, stdout)
	if stderr != "" {
		t.Errorf("skip_same run showed progress:\n%s", stderr)
	}
}

func TestProgressOnTerminal(t *testing.T) {
	cfg := progressProject(t)
	code, stdout, stderr := progressRun(t, true, nil, "run", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"weather.daily -> latest", "6/6 files", "done"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%q", want, stderr)
		}
	}
	if strings.Contains(stdout, "\x1b") || strings.Contains(stdout, "files  ") {
		t.Errorf("progress on stdout:\n%q", stdout)
	}
}

// syncBuffer is a bytes.Buffer safe for mpb's goroutines and the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestProgressDisplay(t *testing.T) {
	var out syncBuffer
	d := &progressDisplay{out: &out}

	// Deletes only: nothing shown.
	d.Start("p -> deletes", 0, 0)
	d.Finish("p -> deletes")
	if out.String() != "" {
		t.Fatalf("a destination without writes showed %q", out.String())
	}

	// Concurrent transfers, then a log line through the idle display.
	d.Start("p -> a", 40, 40*1024)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() { d.Done("p -> a", fmt.Sprint(i), 1024) })
	}
	wg.Wait()
	d.Finish("p -> a")
	got := out.String()
	if !strings.Contains(got, "40/40 files  40.0 KiB/40.0 KiB") || !strings.Contains(got, "done") {
		t.Errorf("completed bar:\n%s", got)
	}

	// Empty files only: the bar counts files.
	d.Start("p -> empty", 2, 0)
	d.Done("p -> empty", "x", 0)
	d.Done("p -> empty", "y", 0)
	d.Finish("p -> empty")
	if got := out.String(); !strings.Contains(got, "2/2 files  0 B/0 B") {
		t.Errorf("empty files:\n%s", got)
	}

	// A failed destination stops where it was.
	d.Start("p -> b", 3, 300)
	d.Done("p -> b", "one", 100)
	d.Finish("p -> b")
	if got := out.String(); !strings.Contains(got, "1/3 files") || !strings.Contains(got, "stopped") {
		t.Errorf("stopped bar:\n%s", got)
	}

	// Log output while idle goes straight through.
	before := len(out.String())
	if _, err := fmt.Fprintln(d, "level=WARN msg=hello"); err != nil {
		t.Fatal(err)
	}
	if got := out.String()[before:]; got != "level=WARN msg=hello\n" {
		t.Errorf("log line while idle: %q", got)
	}
}

func TestProgressLogLinesAboveBars(t *testing.T) {
	var out syncBuffer
	d := &progressDisplay{out: &out}
	g := &globals{env: Env{Stderr: &out}, logLevel: "info", output: "text", progress: "never"}
	if err := g.setup(); err != nil {
		t.Fatal(err)
	}
	log := progressLogger(g.level, d)
	if log.Enabled(context.Background(), -8) || !log.Enabled(context.Background(), 0) {
		t.Errorf("the progress logger does not keep the level info")
	}
	d.Start("p -> a", 2, 2)
	d.Done("p -> a", "x", 1)
	log.Info("in the middle", "path", "x")
	d.Done("p -> a", "y", 1)
	d.Finish("p -> a")
	if got := out.String(); !strings.Contains(got, "msg=\"in the middle\" path=x\n") {
		t.Errorf("log line lost or torn:\n%s", got)
	}
}

func TestProgressLogLinesNeverLost(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		t.Run(fmt.Sprint("terminal=", terminal), func(t *testing.T) {
			var out syncBuffer
			d := &progressDisplay{out: &out, terminal: terminal}
			log := slog.New(slog.NewTextHandler(d, nil)) // info and above
			var wg sync.WaitGroup
			wg.Go(func() {
				for i := range 200 {
					log.Info("line", "i", i)
				}
			})
			for round := range 20 {
				name := fmt.Sprint("p -> ", round)
				d.Start(name, 3, 30)
				for range 3 {
					d.Done(name, "f", 10)
				}
				d.Finish(name)
			}
			wg.Wait()
			got := out.String()
			if n := strings.Count(got, "msg=line"); n != 200 {
				t.Errorf("%d of 200 log lines written", n)
			}
			if strings.HasSuffix(got, "\x1b[J") {
				t.Errorf("the output ends moving the cursor up over the last lines: %q", got[max(0, len(got)-40):])
			}
		})
	}
}

// TestVerifyProgressOnTerminal: verify shows its reads through the same
// display on a terminal (stderr only), and none elsewhere.
func TestVerifyProgressOnTerminal(t *testing.T) {
	cfg := progressProject(t)
	if code, stdout, stderr := progressRun(t, false, nil, "run", "--config", cfg); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	args := []string{"verify", "--config", cfg, "--pipeline", "weather.daily", "--destination", "latest"}
	code, stdout, stderr := progressRun(t, true, nil, args...)
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"verify weather.daily -> latest", "6/6 files", "done"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%q", want, stderr)
		}
	}
	if strings.Contains(stdout, "\x1b") || !strings.Contains(stdout, "6 ok, 0 missing, 0 corrupt") {
		t.Errorf("stdout:\n%q", stdout)
	}
	if _, _, stderr := progressRun(t, false, nil, args...); strings.Contains(stderr, "files") {
		t.Errorf("progress on a non-terminal:\n%q", stderr)
	}
}

// TestRateAndETA: the display shows the average rate and the time left.
func TestRateAndETA(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		finished    bool
		elapsed     time.Duration
		want        string
	}{
		{0, 100, false, time.Second, ""},
		{1024, 4096, false, 100 * time.Millisecond, ""},
		{1 << 20, 4 << 20, false, 2 * time.Second, "  512.0 KiB/s  ETA 0:06"},
		{4 << 20, 4 << 20, true, 2 * time.Second, "  2.0 MiB/s"},
		{1 << 20, 1 << 32, false, time.Second, "  1.0 MiB/s  ETA 1:08:15"},
	} {
		if got := rateETA(tc.done, tc.total, tc.finished, tc.elapsed); got != tc.want {
			t.Errorf("rateETA(%d, %d, %v, %s) = %q, want %q", tc.done, tc.total, tc.finished, tc.elapsed, got, tc.want)
		}
	}
}

// TestProgressLogLines: -v logs each destination's writes as they start
// and finish, with or without the bars (and -log-level debug each file).
func TestProgressLogLines(t *testing.T) {
	for _, progress := range []string{"never", "always"} {
		t.Run(progress, func(t *testing.T) {
			cfg := progressProject(t)
			code, stdout, stderr := progressRun(t, false, nil, "run", "--config", cfg, "--log-level", "debug", "--progress", progress)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			for _, want := range []string{
				`msg=writing destination="weather.daily -> latest" files=6`,
				`msg=wrote destination="weather.daily -> latest" path=data.csv bytes=3000`,
				`msg="writes finished" destination="weather.daily -> latest" files=6/6`,
				`msg="writes finished" destination="weather.daily -> archive" files=4/4`,
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if bars := strings.Contains(stderr, "6/6 files"); bars != (progress == "always") {
				t.Errorf("--progress %s: bars shown %v:\n%s", progress, bars, stderr)
			}
		})
	}
}

// TestProgressStopsWithLastBar: with transfers also logged, a destination
// that only deletes (no bar) does not keep the display running after the
// last bar finished.
func TestProgressStopsWithLastBar(t *testing.T) {
	var out syncBuffer
	d := &progressDisplay{out: &out}
	d.log = slog.New(slog.NewTextHandler(d, nil))
	d.Start("p -> deletes", 0, 0)
	d.Start("p -> a", 2, 2)
	d.Done("p -> a", "x", 1)
	d.Done("p -> a", "y", 1)
	d.Finish("p -> a")
	d.mu.Lock()
	running := d.p != nil
	d.mu.Unlock()
	if running {
		t.Errorf("the display still runs after its last bar finished")
	}
	d.Finish("p -> deletes")
	if got := out.String(); !strings.Contains(got, `msg="writes finished" destination="p -> deletes" files=0/0`) {
		t.Errorf("the destination without writes was not logged:\n%s", got)
	}
}
