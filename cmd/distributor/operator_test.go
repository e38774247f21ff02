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

// -q is for cron: nothing on stdout when every destination succeeded,
// the whole report when anything failed; --output json is unchanged.
func TestQuietPrintsOnlyFailures(t *testing.T) {
	w := newHostileWS(t, false)
	code, out, errs := execEnv(t, nil, "run", "--config", w.conf, "-q")
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("run -q that succeeds: exit %d, stdout %q, stderr %q; want exit 0 and nothing", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(w.root, "daily", "index.html")); err != nil {
		t.Fatalf("run -q did not publish: %v", err)
	}
	for _, args := range [][]string{{"validate"}, {"verify"}, {"reconcile-state", "--dry-run"}, {"prune", "--dry-run"}} {
		if code, out, errs := execEnv(t, nil, append(append(args, "--config", w.conf), "-q")...); code != 0 || out != "" || errs != "" {
			t.Errorf("%s -q that succeeds: exit %d, stdout %q, stderr %q; want exit 0 and nothing", args[0], code, out, errs)
		}
	}
	if code, out, _ := execEnv(t, nil, "state", "show", "--config", w.conf, "-q"); code != 0 || !strings.HasPrefix(out, "catalog of ") {
		t.Errorf("state show -q: exit %d, stdout %q; want the catalog (what was asked for)", code, out)
	}

	// A mistyped rename fails the run: -q prints exactly the report a run
	// without -q prints.
	w.editConfig(t, "rename: {report.md: index.md}", "rename: {reprot.md: index.md}")
	code, full, _ := execEnv(t, nil, "run", "--config", w.conf, "--dry-run")
	if code != 1 {
		t.Fatalf("dry run with a mistyped rename: exit %d, want 1\n%s", code, full)
	}
	code, out, errs = execEnv(t, nil, "run", "--config", w.conf, "--dry-run", "-q")
	if code != 1 || out != full || !strings.Contains(errs, `level=ERROR msg="destination failed"`) {
		t.Errorf("run -q that fails: exit %d, stderr %q, stdout:\n%s\nwant exit 1, the error logged and the whole report:\n%s", code, errs, out, full)
	}
	if !strings.Contains(out, `FAILED: paths.rename (config line 12): "reprot.md" is not a file of the bundle; did you mean "report.md"?`) {
		t.Errorf("the report does not say why:\n%s", out)
	}

	// JSON: one document, with -q as without.
	for _, q := range []string{"-q", "--log-level=warn"} {
		code, out, _ := execEnv(t, nil, "run", "--config", w.conf, "--dry-run", "--output", "json", q)
		var doc struct {
			Command string `json:"command"`
			Summary struct {
				Failed int `json:"failed"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(out), &doc); code != 1 || err != nil || doc.Command != "run" || doc.Summary.Failed != 1 {
			t.Errorf("run --output json %s: exit %d, %v, %+v\n%s", q, code, err, doc, out)
		}
	}
	w.editConfig(t, "rename: {report.md: index.md}", "rename: {report.md: index.md}")
	code, out, _ = execEnv(t, nil, "run", "--config", w.conf, "--output", "json", "-q")
	if code != 0 || !strings.HasPrefix(out, "{\n  \"command\": \"run\"") {
		t.Errorf("run --output json -q that succeeds: exit %d, want the document:\n%s", code, out)
	}
}

// verify on a mistyped root found no catalog and said "nothing to verify",
// exit 0: a monitoring job took it for healthy. Now it fails naming the
// root; a catalog that records none of the owner's outputs passes, saying
// so.
func TestVerifyRootWithoutCatalog(t *testing.T) {
	w := newHostileWS(t, true) // published to www
	w.editConfig(t, "path: www", "path: wwww")
	typo := filepath.Join(w.dir, "wwww")
	code, out, errs := execEnv(t, nil, "verify", "--config", w.conf)
	want := "verify reports/site at " + typo + " (outputs of reports/site)\n" +
		"  FAILED: no catalog (.distributor.json) found at " + typo + ", which is empty or does not exist: " +
		"nothing is managed there, so there is nothing to verify; did you mean another path? " +
		"(check the destination's path, --pipeline and --destination, or publish first with `distributor run`)\n"
	if code != 1 || out != want || !strings.Contains(errs, `level=ERROR msg="verify failed"`) {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 1, stdout:\n%s", code, errs, out, want)
	}

	// A root that holds files but no catalog says so.
	w.write(t, "wwww/index.html", "<p>by hand</p>\n")
	if _, out, _ := execEnv(t, nil, "verify", "--config", w.conf); !strings.Contains(out, ", which holds files but none that distributor published: ") {
		t.Errorf("a root with unmanaged files only:\n%s", out)
	}

	// The JSON document still comes out, one of it.
	code, out, _ = execEnv(t, nil, "verify", "--config", w.conf, "--output", "json")
	var doc struct {
		Command string  `json:"command"`
		Root    string  `json:"root"`
		State   string  `json:"state"`
		OK      int     `json:"ok"`
		Error   *string `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	if code != 1 || doc.Command != "verify" || doc.Root != typo || doc.State != "none" || doc.OK != 0 || doc.Error == nil ||
		!strings.HasPrefix(*doc.Error, "no catalog (.distributor.json) found at "+typo+", which holds files") {
		t.Errorf("--output json: exit %d, %+v", code, doc)
	}

	// A catalog with outputs of other owners only: exit 0, and it says
	// nothing was verified.
	w.write(t, "distributor.yaml", strings.Replace(hostileConfig, "destinations: [site]", "destinations: [site]\n  - id: nightly\n    source: bundle\n    destinations: [other]", 1)+`  - id: other
    backend: local
    path: www
    paths: {prefix: other/}
`)
	code, out, errs = execEnv(t, nil, "verify", "--config", w.conf, "--pipeline", "nightly", "--destination", "other")
	want = "verify nightly/other at " + w.root + " (outputs of nightly/other)\n" +
		"  0 ok, 0 missing, 0 corrupt\n" +
		"  ok, but nothing was verified: the catalog records no output of nightly/other (--all-owners checks every owner's)\n"
	if code != 0 || out != want || errs != "" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 0, stdout:\n%s", code, errs, out, want)
	}
	if code, out, _ := execEnv(t, nil, "verify", "--config", w.conf, "--pipeline", "nightly", "--destination", "other", "--all-owners"); code != 0 || !strings.Contains(out, "  3 ok, 0 missing, 0 corrupt\n") {
		t.Errorf("--all-owners: exit %d\n%s", code, out)
	}
}

// validate without --source accepted a mistyped paths.rename key although
// the configured bundle was there, and the run failed on it. Now it plans
// that bundle as --source does; one that cannot be loaded yet is a note.
func TestValidatePlansConfiguredSource(t *testing.T) {
	w := newHostileWS(t, false)
	w.editConfig(t, "rename: {report.md: index.md}", "rename: {reprot.md: index.md}")
	digest := readDigest(t, w.bundle)
	code, out, errs := execEnv(t, nil, "validate", "--config", w.conf)
	want := "configuration " + w.conf + ": 1 problem(s) (1 pipeline(s), 1 destination(s))\n" +
		"pipeline reports: source reports.daily\n  " + w.bundle + "\n  " + digest + "\n" +
		"  reports -> site: 0 output(s) at " + w.root + "\n" +
		`problem: pipeline reports, destination site: paths.rename (config line 12): "reprot.md" is not a file of the bundle; did you mean "report.md"?` + "\n" +
		"invalid\n"
	if code != 1 || out != want || errs != "" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 1, stdout:\n%s", code, errs, out, want)
	}
	// The problem is the run's failure, word for word.
	_, runOut, _ := execEnv(t, nil, "run", "--config", w.conf, "--dry-run")
	if got := failedLine(t, runOut); !strings.Contains(out, got) {
		t.Errorf("run fails with %q, which validate does not report", got)
	}
	// --source checks the same, as before.
	if code, srcOut, _ := execEnv(t, nil, "validate", "--config", w.conf, "--source", w.bundle); code != 1 ||
		srcOut != strings.Replace(want, "pipeline reports: source ", "source ", 1) {
		t.Errorf("--source: exit %d\n%s", code, srcOut)
	}

	// The bundle is being written (no manifest yet): a note, exit 0.
	if err := os.Rename(filepath.Join(w.bundle, "manifest.json"), filepath.Join(w.dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	code, out, errs = execEnv(t, nil, "validate", "--config", w.conf)
	want = "configuration " + w.conf + ": ok (1 pipeline(s), 1 destination(s))\n" +
		"note: pipeline reports: the configured source could not be loaded, so its outputs were not planned " +
		"(a bundle is often written just before the run): source bundle " + w.bundle + ": manifest.json: missing " +
		"(to write it, seal the bundle: distributor bundle seal " + w.bundle + " --id ID)\n"
	if code != 0 || out != want || errs != "" {
		t.Errorf("no manifest yet: exit %d, stderr %q, stdout:\n%s\nwant exit 0, stdout:\n%s", code, errs, out, want)
	}
	code, out, _ = execEnv(t, nil, "validate", "--config", w.conf, "--output", "json")
	var doc struct {
		Valid    bool     `json:"valid"`
		Problems []string `json:"problems"`
		Notes    []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || !doc.Valid || len(doc.Problems) != 0 || len(doc.Notes) != 1 ||
		!strings.HasPrefix(doc.Notes[0], "pipeline reports: the configured source could not be loaded") {
		t.Errorf("--output json: exit %d, %v, %+v\n%s", code, err, doc, out)
	}

	// Not there at all: the warning it always was, and no note.
	if err := os.RemoveAll(w.bundle); err != nil {
		t.Fatal(err)
	}
	code, out, _ = execEnv(t, nil, "validate", "--config", w.conf)
	want = "configuration " + w.conf + ": ok (1 pipeline(s), 1 destination(s))\n" +
		"warning: pipeline reports: source " + w.bundle + " does not exist (yet): a run fails for this pipeline until a bundle is written there\n"
	if code != 0 || out != want {
		t.Errorf("no bundle: exit %d, stdout:\n%s\nwant exit 0, stdout:\n%s", code, out, want)
	}
}

// readDigest returns the digest of dir/manifest.json.
func readDigest(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Digest string }
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.Digest
}
