package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/distributor-dev/distributor/internal/cli"
)

// TestMetricsFile runs the weather example with --metrics-file, once
// successfully and once with one root locked by another writer (exit 11),
// checks both files with promtool, and that the failed destination keeps
// its last success time while the other one moves on.
func TestMetricsFile(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not installed (scripts/test installs Debian's prometheus package)")
		}
		t.Log("promtool is not installed: the files are checked by this test only")
	}
	dir := t.TempDir()
	copyTree(t, "../../examples/weather", dir)
	conf := filepath.Join(dir, "distributor.yaml")
	prom := filepath.Join(dir, "textfile", "distributor.prom")
	if err := os.Mkdir(filepath.Dir(prom), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(want int, extra ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		args := append([]string{"run", "--config", conf, "--metrics-file", prom}, extra...)
		if code := cli.Execute(context.Background(), args, cli.Env{Stdout: &out, Stderr: &errb, Version: "v9.9.9-test"}); code != want {
			t.Fatalf("distributor %v: exit %d, want %d\n%s%s", args, code, want, out.String(), errb.String())
		}
		data, err := os.ReadFile(prom)
		if err != nil {
			t.Fatal(err)
		}
		if promtool != "" {
			cmd := exec.Command(promtool, "check", "metrics")
			cmd.Stdin = bytes.NewReader(data)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("promtool check metrics: %v\n%s\n%s", err, out, data)
			}
		}
		return string(data)
	}
	value := func(file, name, dest string) string {
		t.Helper()
		re := regexp.MustCompile(`(?m)^` + name + `\{pipeline="weather\.daily",destination="` + dest + `"[^}]*\} (\S+)$`)
		m := re.FindStringSubmatch(file)
		if m == nil {
			t.Fatalf("no %s for %s in\n%s", name, dest, file)
		}
		return m[1]
	}

	first := run(0)
	for _, d := range []string{"latest", "archive"} {
		if v := value(first, "distributor_last_run_success", d); v != "1" {
			t.Errorf("%s: last_run_success %s after a successful run", d, v)
		}
	}
	if value(first, "distributor_last_run_written_bytes", "latest") == "0" {
		t.Error("the first publish wrote 0 bytes, says the file")
	}
	if !regexp.MustCompile(`(?m)^distributor_build_info\{version="v9\.9\.9-test"\} 1$`).MatchString(first) {
		t.Errorf("no build_info with the version:\n%s", first)
	}

	// Another writer holds latest's lock: a run that must write (--rewrite:
	// one with nothing to do takes no lock) exits 11, latest fails and
	// keeps its last success, archive succeeds again.
	live := `{"id":"abc","host":"web9.example","pid":4242,"command":"run","acquired_at":"2026-06-19T12:00:00Z","expires_at":"2099-01-01T00:00:00Z"}`
	if err := os.WriteFile(filepath.Join(dir, "public", "latest", ".distributor.lock"), []byte(live), 0o644); err != nil {
		t.Fatal(err)
	}
	second := run(11, "--lock-timeout", "-1s", "--rewrite")
	if v := value(second, "distributor_last_run_success", "latest"); v != "0" {
		t.Errorf("latest: last_run_success %s after its lock was held", v)
	}
	if a, b := value(first, "distributor_last_success_timestamp_seconds", "latest"), value(second, "distributor_last_success_timestamp_seconds", "latest"); a != b {
		t.Errorf("latest: last success moved from %s to %s on a failed run", a, b)
	}
	if v := value(second, "distributor_last_run_success", "archive"); v != "1" {
		t.Errorf("archive: last_run_success %s after a successful run", v)
	}
	if a, b := value(first, "distributor_last_success_timestamp_seconds", "archive"), value(second, "distributor_last_run_timestamp_seconds", "archive"); a == b {
		t.Errorf("archive: the second run's time %s is the first's", b)
	}
}
