package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sealed writes files into dir/name, seals it with id and returns the
// bundle's directory and its manifest's digest.
func sealed(t *testing.T, dir, name, id string, files map[string]string) (string, string) {
	t.Helper()
	b := filepath.Join(dir, name)
	writeFiles(t, b, files)
	res := distributor(t, dir, "bundle", "seal", b, "--id", id, "--created", "2026-06-19T12:00:00Z", "--output", "json")
	if res.code != 0 {
		t.Fatalf("bundle seal: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var doc struct{ Digest string }
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	return b, doc.Digest
}

// bundleVerifyDoc is the document of `bundle verify --output json`.
type bundleVerifyDoc struct {
	Valid    bool `json:"valid"`
	Problems []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	} `json:"problems"`
	Hint string `json:"hint"`
}

// Issue 21.5: bundle verify lists a missing file, a size mismatch, a wrong
// sha256 and a stale digest at once (it listed the digest alone, and the
// files' problems only once the digest was fixed by hand).
func TestBundleVerifyListsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	b, digest := sealed(t, dir, "bundle", "v.one", map[string]string{
		"gone.txt": "gone\n", "size.txt": "size\n", "hash.txt": "hash\n", "ok.txt": "ok\n"})
	if err := os.Remove(filepath.Join(b, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, b, map[string]string{"size.txt": "longer\n", "hash.txt": "HASH\n"})
	stale := "sha256:" + strings.Repeat("0", 64)
	m, err := os.ReadFile(filepath.Join(b, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, b, map[string]string{"manifest.json": strings.Replace(string(m), digest, stale, 1)})

	want := []struct{ path, reason string }{
		{"gone.txt", "missing"},
		{"hash.txt", "sha256 mismatch: manifest " + sha256Of("hash\n") + ", file " + sha256Of("HASH\n")},
		{"manifest.json", `digest "` + stale + `": does not match the listed files (computed ` + digest + ")"},
		{"size.txt", "size 7 does not match manifest size 5"},
	}
	hint := "reseal after an intended edit: distributor bundle seal " + b + " --id v.one"

	text := distributor(t, dir, "bundle", "verify", b)
	if text.code != 1 {
		t.Errorf("bundle verify: exit %d, want 1", text.code)
	}
	wantText := b + ": invalid bundle, 4 problem(s):\n"
	for _, p := range want {
		wantText += "  " + p.path + ": " + p.reason + "\n"
	}
	wantText += hint + "\n"
	if text.stdout != wantText {
		t.Errorf("bundle verify text:\n%s\nwant:\n%s", text.stdout, wantText)
	}

	res := distributor(t, dir, "bundle", "verify", b, "--output", "json")
	if res.code != 1 {
		t.Errorf("bundle verify --output json: exit %d, want 1", res.code)
	}
	var doc bundleVerifyDoc
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, res.stdout)
	}
	if doc.Valid || len(doc.Problems) != len(want) || doc.Hint != hint {
		t.Fatalf("bundle verify JSON: valid %v, %d problem(s), hint %q; want 4 and %q:\n%s", doc.Valid, len(doc.Problems), doc.Hint, hint, res.stdout)
	}
	for i, p := range want {
		if got := doc.Problems[i]; got.Path != p.path || got.Reason != p.reason {
			t.Errorf("problems[%d] = %s: %s, want %s: %s", i, got.Path, got.Reason, p.path, p.reason)
		}
	}
}

// Issue 21.4: a bundle whose data.csv no longer matches its manifest (same
// size, other bytes) is reported once, as the pipeline's error, with
// destinations: [] as docs/cli.md says; the mismatch is found while the
// bytes are staged (local) or hashed before writing (S3), and no root
// changes, an existing one or a fresh one.
func TestRunBadBundleReportedOnce(t *testing.T) {
	dir := t.TempDir()
	bucket := fakeS3(t)
	site, fresh := filepath.Join(dir, "www"), filepath.Join(dir, "parent", "fresh")
	config := "pipelines:\n  - id: p\n    source: " + filepath.Join(dir, "v1") + "\n    destinations: [site, fresh, bucket]\n" +
		"destinations:\n  - id: site\n    backend: local\n    path: " + site + "\n" +
		"  - id: fresh\n    backend: local\n    path: " + fresh + "\n" +
		"  - id: bucket\n" + bucket.yaml
	writeFiles(t, dir, map[string]string{"distributor.yaml": config})
	sealed(t, dir, "v1", "r.one", map[string]string{"data.csv": "a,b\n1,2\n", "report.md": "# Report\n"})
	if res := distributor(t, dir, "run", "--destination", "site"); res.code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	b, _ := sealed(t, dir, "v2", "r.two", map[string]string{"data.csv": "a,b\n1,3\n", "report.md": "# Report 2\n"})
	writeFiles(t, b, map[string]string{"data.csv": "a,b\n9,3\n"}) // same size, other bytes
	before := snapshotTree(t, site)
	bucketBefore := objects(t, bucket.store)

	mismatch := "data.csv: sha256 mismatch: manifest " + sha256Of("a,b\n1,3\n") + ", file " + sha256Of("a,b\n9,3\n")
	hint := "reseal after an intended edit: distributor bundle seal " + b + " --id r.two"
	text := distributor(t, dir, "run", "--source", b, "--pipeline", "p")
	if text.code != 1 {
		t.Errorf("run: exit %d, want 1", text.code)
	}
	for _, want := range []string{"  error: source bundle " + b + ": " + mismatch, hint, "\n  nothing was published for this pipeline\n", "1 pipeline(s) failed as a whole"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("run text does not say %q:\n%s", want, text.stdout)
		}
	}
	if n := strings.Count(text.stdout, "sha256 mismatch"); n != 1 {
		t.Errorf("run text names the mismatch %d times, want once:\n%s", n, text.stdout)
	}
	for _, not := range []string{"FAILED", "destination site", "plan:"} {
		if strings.Contains(text.stdout, not) {
			t.Errorf("run text says %q:\n%s", not, text.stdout)
		}
	}

	for _, args := range [][]string{{}, {"--destination", "bucket"}, {"--destination", "fresh"}} {
		res := distributor(t, dir, append([]string{"run", "--source", b, "--pipeline", "p", "--output", "json"}, args...)...)
		if res.code != 1 {
			t.Errorf("run %v --output json: exit %d, want 1", args, res.code)
		}
		var doc struct {
			Pipelines []struct {
				Error        *string           `json:"error"`
				Destinations []json.RawMessage `json:"destinations"`
			} `json:"pipelines"`
			Summary struct {
				Destinations    int `json:"destinations"`
				Failed          int `json:"failed"`
				PipelinesFailed int `json:"pipelines_failed"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, res.stdout)
		}
		if len(doc.Pipelines) != 1 {
			t.Fatalf("run %v: %d pipelines", args, len(doc.Pipelines))
		}
		p := doc.Pipelines[0]
		if p.Error == nil || !strings.Contains(*p.Error, mismatch) || !strings.Contains(*p.Error, hint) {
			t.Errorf("run %v: pipeline error %v, want it to name %q and %q", args, p.Error, mismatch, hint)
		}
		if p.Destinations == nil || len(p.Destinations) != 0 || !strings.Contains(res.stdout, `"destinations": []`) {
			t.Errorf("run %v: destinations %s, want []", args, p.Destinations)
		}
		if s := doc.Summary; s.Destinations != 0 || s.Failed != 0 || s.PipelinesFailed != 1 {
			t.Errorf("run %v: summary %+v, want 0 destinations, 0 failed, 1 pipeline failed", args, s)
		}
		if n := strings.Count(res.stdout, "sha256 mismatch"); n != 1 {
			t.Errorf("run %v: JSON names the mismatch %d times, want once:\n%s", args, n, res.stdout)
		}
	}

	if diff := diffTrees(before, snapshotTree(t, site)); diff != "" {
		t.Errorf("the existing root changed:\n%s", diff)
	}
	if _, err := os.Lstat(filepath.Join(dir, "parent")); !os.IsNotExist(err) {
		t.Errorf("the fresh root's parent was created (%v)", err)
	}
	if got := objects(t, bucket.store); !maps.Equal(got, bucketBefore) {
		t.Errorf("the bucket's root changed: %v", keys(got))
	}
}

// Issue 22: a missing manifest.json, a missing bundle directory and a size
// mismatch after an edit each name the path and the next step.
func TestBundleMessagesNameTheNextStep(t *testing.T) {
	dir := t.TempDir()
	b := filepath.Join(dir, "bundle")
	config := filepath.Join(dir, "distributor.yaml")
	writeFiles(t, dir, map[string]string{"distributor.yaml": "pipelines:\n  - id: p\n    source: " + b +
		"\n    destinations: [site]\ndestinations:\n  - id: site\n    backend: local\n    path: " + filepath.Join(dir, "www") + "\n"})
	check := func(t *testing.T, wantCode int, want string, args ...string) {
		t.Helper()
		res := distributor(t, dir, args...)
		if res.code != wantCode || !strings.Contains(res.stdout, want) {
			t.Errorf("distributor %s: exit %d, want %d and stdout with %q:\n%s%s", strings.Join(args, " "), res.code, wantCode, want, res.stdout, res.stderr)
		}
	}

	t.Run("missing directory", func(t *testing.T) {
		check(t, 1, "  error: source bundle "+b+": directory does not exist (check the source of pipeline p in "+config+")\n", "run")
		check(t, 1, "  error: source bundle "+b+": directory does not exist (check --source)\n", "run", "--pipeline", "p", "--source", b)
		check(t, 1, b+": invalid bundle, 1 problem(s):\n  directory does not exist\n", "bundle", "verify", b)
	})
	t.Run("missing manifest", func(t *testing.T) {
		writeFiles(t, b, map[string]string{"report.md": "# Report\n"})
		seal := "to write it, seal the bundle: distributor bundle seal " + b + " --id ID"
		check(t, 1, "  error: source bundle "+b+": manifest.json: missing ("+seal+")\n", "run")
		check(t, 1, "  manifest.json: missing\n"+seal+"\n", "bundle", "verify", b)
		check(t, 1, "problem: source bundle "+b+": manifest.json: missing ("+seal+")\n", "validate", "--source", b)
	})
	t.Run("size mismatch after an edit", func(t *testing.T) {
		sealed(t, dir, "bundle", "r.one", map[string]string{"report.md": "# Report\n"})
		writeFiles(t, b, map[string]string{"report.md": "# Report, edited\n"})
		reseal := "reseal after an intended edit: distributor bundle seal " + b + " --id r.one"
		check(t, 1, "  error: source bundle "+b+": report.md: size 17 does not match manifest size 9 ("+reseal+")\n", "run")
		check(t, 1, "  report.md: size 17 does not match manifest size 9\n"+reseal+"\n", "bundle", "verify", b)
	})
}
