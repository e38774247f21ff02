package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/cli"
)

// installedBinary is the path the examples in examples/systemd run.
const installedBinary = "/usr/local/bin/distributor"

// TestSystemdUnitsVerify checks examples/systemd's service and timer with
// systemd-analyze verify, with ExecStart pointed at a binary that exists
// (verify refuses a missing one): every directive known, the sandbox and
// the timer valid.
func TestSystemdUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is not installed (scripts/test installs the systemd package)")
		}
		t.Skip("systemd-analyze is not installed")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var units []string
	for _, name := range []string{"distributor.service", "distributor.timer"} {
		data, err := os.ReadFile(filepath.Join("../../examples/systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "distributor.service" && !bytes.Contains(data, []byte("ExecStart="+installedBinary+" ")) {
			t.Fatalf("%s: ExecStart does not run %s", name, installedBinary)
		}
		data = bytes.ReplaceAll(data, []byte(installedBinary), []byte(exe))
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		units = append(units, p)
	}
	out, err := exec.Command(analyze, append([]string{"verify", "--man=no"}, units...)...).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestSchedulerCommandsRun runs the commands the systemd service and the
// cron line give (as a dry run, on a copy of the weather example), so that
// a renamed flag cannot leave the examples behind.
func TestSchedulerCommandsRun(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "../../examples/weather", dir)
	conf := filepath.Join(dir, "distributor.yaml")
	for _, tc := range []struct{ file, prefix string }{
		{"distributor.service", "ExecStart=" + installedBinary + " "},
		{"distributor.cron", installedBinary + " "},
	} {
		data, err := os.ReadFile(filepath.Join("../../examples/systemd", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(data, []byte(tc.prefix))
		if i < 0 {
			t.Fatalf("%s: no %q", tc.file, tc.prefix)
		}
		line, _, _ := strings.Cut(string(data[i+len(tc.prefix):]), "\n")
		line, _, _ = strings.Cut(line, ">") // the cron line's redirection
		args := strings.Fields(line)
		for j, a := range args {
			if a == "/etc/distributor/distributor.yaml" {
				args[j] = conf
			}
		}
		args = append(args, "--dry-run")
		var stdout, stderr bytes.Buffer
		env := cli.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
			if k == "DISTRIBUTOR_CONFIG" {
				return conf // the service's Environment=
			}
			return ""
		}}
		if code := cli.Execute(context.Background(), args, env); code != 0 {
			t.Errorf("%s: distributor %s: exit %d\n%s%s", tc.file, strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
	}
}
