package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
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
