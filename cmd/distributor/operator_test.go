package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Operator experience, round four: each test sets up what a new user
// tripped over and checks the message, the exit status and the output.

// bundle verify on a bundle that is invalid and holds a file its manifest
// does not list names both: the unlisted file may be the one meant to be
// listed, and the warning was dropped as soon as the bundle was invalid.
func TestBundleVerifyInvalidKeepsUnlistedWarning(t *testing.T) {
	dir := t.TempDir()
	b, _ := sealed(t, dir, "bundle", "v.one", map[string]string{"report.md": "# Report\n"})
	writeFiles(t, b, map[string]string{"report.md": "# Report, edited\n", "chart.svg": "<svg/>\n"})

	code, out, errs := execEnv(t, nil, "bundle", "verify", b)
	want := "warning: chart.svg: not listed in the manifest (ignored)\n" +
		b + ": invalid bundle, 1 problem(s):\n" +
		"  report.md: size 17 does not match manifest size 9\n" +
		"reseal after an intended edit: distributor bundle seal " + b + " --id v.one\n"
	if code != 1 || out != want || errs != "" {
		t.Errorf("exit %d, stdout:\n%s\nstderr %q\nwant exit 1, stdout:\n%s", code, out, errs, want)
	}

	code, out, _ = execEnv(t, nil, "bundle", "verify", b, "--output", "json")
	var doc struct {
		Valid    bool     `json:"valid"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != 1 || doc.Valid || len(doc.Warnings) != 1 || doc.Warnings[0] != "chart.svg: not listed in the manifest (ignored)" {
		t.Errorf("--output json: exit %d, valid %v, warnings %q", code, doc.Valid, doc.Warnings)
	}

	// Valid again: the same warning.
	if err := os.WriteFile(filepath.Join(b, "report.md"), []byte("# Report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := execEnv(t, nil, "bundle", "verify", b); code != 0 || !strings.HasPrefix(out, "warning: chart.svg: not listed") {
		t.Errorf("valid bundle: exit %d\n%s", code, out)
	}
}
