package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// Tests that need real processes (kill -9, concurrent writers) run this
	// test binary as the distributor command.
	if os.Getenv("DISTRIBUTOR_TEST_AS_MAIN") == "1" {
		os.Exit(run())
	}
	testscript.Main(m, map[string]func(){
		"distributor": func() { os.Exit(run()) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script through
// the real binary entry point on temporary directories.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("DISTRIBUTOR_CONFIG", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":  cmdStatus,
			"jsondoc": cmdJSONDoc,
			"sleep":   cmdSleep,
			"report":  cmdReport,
		},
	})
}

// cmdStatus runs "status N command args..." and fails unless the command
// exits with status N. Its stdout and stderr are kept for later checks.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("status: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdReport runs "report [-count=N] PATTERN": stdout, read as a text
// report that is fitted to 80 columns, must match PATTERN (N times; with
// !, not at all), where each space (or " +") of the pattern matches any run
// of white space, the line breaks of wrapped text and their indentation
// included. Where a line breaks depends on the length of $WORK, so a
// pattern that spans a path must not depend on it.
func cmdReport(ts *testscript.TestScript, neg bool, args []string) {
	count := -1
	if len(args) == 2 && strings.HasPrefix(args[0], "-count=") {
		n, err := strconv.Atoi(strings.TrimPrefix(args[0], "-count="))
		if err != nil || neg {
			ts.Fatalf("report: bad %s", args[0])
		}
		count, args = n, args[1:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: report [-count=N] PATTERN")
	}
	re, err := regexp.Compile("(?m)" + spaceRun.ReplaceAllString(args[0], `\s+`))
	if err != nil {
		ts.Fatalf("report: %v", err)
	}
	n := len(re.FindAllString(ts.ReadFile("stdout"), -1))
	switch {
	case count >= 0 && n != count:
		ts.Fatalf("%d matches for `%s` in the report on stdout, want %d", n, args[0], count)
	case count < 0 && n == 0 && !neg:
		ts.Fatalf("no match for `%s` in the report on stdout", args[0])
	case n > 0 && neg:
		ts.Fatalf("unexpected match for `%s` in the report on stdout", args[0])
	}
}

// spaceRun is a run of spaces in a pattern, each maybe repeated (" +").
var spaceRun = regexp.MustCompile(`( \+?)+`)

// cmdSleep runs "sleep DURATION": it waits, so that what a script published
// before becomes older than a retention policy's older_than.
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("sleep: %v", err)
	}
	time.Sleep(d)
}

// cmdJSONDoc runs "jsondoc stdout" (or stderr, or a file) and fails unless
// it holds exactly one JSON document.
func cmdJSONDoc(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsondoc stdout|stderr|FILE")
	}
	data := ts.ReadFile(args[0])
	dec := json.NewDecoder(bytes.NewReader([]byte(data)))
	var v any
	err := dec.Decode(&v)
	if err == nil {
		if err2 := dec.Decode(&v); !errors.Is(err2, io.EOF) {
			err = errors.New("more than one JSON document")
		}
	}
	switch {
	case err != nil && !neg:
		ts.Fatalf("%s is not exactly one JSON document: %v", args[0], err)
	case err == nil && neg:
		ts.Fatalf("%s is one JSON document", args[0])
	}
}
