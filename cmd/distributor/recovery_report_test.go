package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// removals is what a recovery is expected to remove from a root: the
// outputs a dead run created and the temporary files of its writes.
type removals struct {
	files, temps int
	fileBytes    int64
	tempBytes    int64
}

// killMidPublish starts a run of cfg into root and kills it (SIGKILL) as
// soon as its journal is at the root and the temporary files of its writes
// hold 8 MiB, then returns what is on disk for the next run's recovery to
// remove.
func killMidPublish(t *testing.T, cfg, root string) removals {
	t.Helper()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, command(t, "run", "--config", cfg))
	deadline := time.Now().Add(testtime.Scale(time.Minute))
	for {
		// (The lock is written through a temporary file too: the outputs'
		// come after the journal.)
		if intentPendingAt(t, root) && tempBytes(root) >= 8<<20 {
			break
		}
		if p.exited() {
			t.Fatalf("the run ended before a temporary file appeared:\n%s", p.output())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no temporary file appeared within a minute:\n%s", p.kill())
		}
		time.Sleep(time.Millisecond)
	}
	p.kill()
	if !intentPendingAt(t, root) {
		t.Fatalf("the killed run left no journal (neither %s nor an intent in its lock record)", journal.Name)
	}
	var r removals
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch name := d.Name(); {
		case strings.HasPrefix(name, storage.TempPrefix):
			r.temps++
			r.tempBytes += fi.Size()
		case !strings.HasPrefix(name, ".distributor"):
			r.files++ // an output the dead run created and did not record
			r.fileBytes += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.temps == 0 {
		t.Fatal("no temporary file left to sweep")
	}
	t.Logf("killed mid-publish: %d temporary file(s) (%d B) and %d output(s) (%d B) on disk", r.temps, r.tempBytes, r.files, r.fileBytes)
	return r
}

// TestRecoveryReportsWhatItRemoved: a run killed (SIGKILL) while it writes
// large files leaves temporary files (and maybe whole outputs it never
// recorded); the next run removes them and reports, in JSON and in text,
// exactly how many files of each kind and how many bytes it removed.
func TestRecoveryReportsWhatItRemoved(t *testing.T) {
	cfg, root := recoveryFixture(t)
	want := killMidPublish(t, cfg, root)
	var doc struct {
		Pipelines []struct {
			Destinations []recoveryDoc `json:"destinations"`
		} `json:"pipelines"`
	}
	decodeRecoveryRun(t, &doc, "run", "--config", cfg, "--output", "json")
	doc.Pipelines[0].Destinations[0].check(t, want)
	auditRoot(t, root)

	want = killMidPublish(t, cfg, root)
	wantRecoveryText(t, want, "run", "--config", cfg)
	auditRoot(t, root)
}

// TestMaintenanceReportsRecovery (spec section 8): prune --apply and
// reconcile-state on a root a killed run left say, as run does, what their
// recovery removed, in JSON and in text.
func TestMaintenanceReportsRecovery(t *testing.T) {
	cfg, root := recoveryFixture(t)
	for _, args := range [][]string{
		{"prune", "--pipeline", "p", "--destination", "site", "--apply", "--config", cfg},
		{"reconcile-state", "--pipeline", "p", "--destination", "site", "--config", cfg},
	} {
		t.Run(args[0], func(t *testing.T) {
			want := killMidPublish(t, cfg, root)
			var doc recoveryDoc
			decodeRecoveryRun(t, &doc, append(args, "--output", "json")...)
			doc.check(t, want)
			auditRoot(t, root)

			want = killMidPublish(t, cfg, root)
			wantRecoveryText(t, want, args...)
			auditRoot(t, root)
		})
	}
}

// recoveryFixture writes a configuration publishing a bundle of four
// 20 MiB files to the local root it returns (with a retention policy, for
// prune).
func recoveryFixture(t *testing.T) (cfg, root string) {
	dir := t.TempDir()
	writeBigBundle(t, filepath.Join(dir, "b"), 4, 20<<20)
	cfg = filepath.Join(dir, "distributor.yaml")
	if err := os.WriteFile(cfg, []byte("pipelines:\n  - {id: p, source: b, destinations: [site]}\n"+
		"destinations:\n  - {id: site, backend: local, path: www, retention: {prune: {older_than: 1d}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, filepath.Join(dir, "www")
}

// recoveryDoc is what a document says of a recovery.
type recoveryDoc struct {
	Recovered *struct {
		Removed      int   `json:"removed"`
		RemovedBytes int64 `json:"removed_bytes"`
	} `json:"recovered"`
	TempSwept *struct {
		Files int   `json:"files"`
		Bytes int64 `json:"bytes"`
	} `json:"temp_swept"`
}

// check compares what d says was removed with want.
func (d recoveryDoc) check(t *testing.T, want removals) {
	t.Helper()
	if d.Recovered == nil || d.TempSwept == nil {
		t.Fatalf("the JSON report has recovered %v, temp_swept %v; want both", d.Recovered, d.TempSwept)
	}
	if d.Recovered.Removed != want.files || d.Recovered.RemovedBytes != want.fileBytes {
		t.Errorf("recovered: removed %d (%d B), want %d (%d B)", d.Recovered.Removed, d.Recovered.RemovedBytes, want.files, want.fileBytes)
	}
	if d.TempSwept.Files != want.temps || d.TempSwept.Bytes != want.tempBytes {
		t.Errorf("temp_swept: %d (%d B), want %d (%d B)", d.TempSwept.Files, d.TempSwept.Bytes, want.temps, want.tempBytes)
	}
}

// decodeRecoveryRun runs the command args, which recovers a root a killed
// run left, and decodes its JSON document into doc.
func decodeRecoveryRun(t *testing.T, doc any, args ...string) {
	t.Helper()
	code, out := runProc(t, args[0]+" after the kill (JSON)", testtime.Scale(time.Minute), args...)
	if code != 0 {
		t.Fatalf("%s after the kill: status %d\n%s", args[0], code, out)
	}
	// The JSON document is the first line that starts with "{" (the logs
	// share the output).
	start := strings.Index(out, "{\n")
	if start < 0 {
		t.Fatalf("no JSON document in the output:\n%s", out)
	}
	if err := json.NewDecoder(strings.NewReader(out[start:])).Decode(doc); err != nil {
		t.Fatalf("the JSON document: %v\n%s", err, out)
	}
}

// wantRecoveryText runs the command args, which recovers a root a killed
// run left, and checks that its text output says what it removed.
func wantRecoveryText(t *testing.T, want removals, args ...string) {
	t.Helper()
	code, out := runProc(t, args[0]+" after the kill (text)", testtime.Scale(time.Minute), args...)
	if code != 0 {
		t.Fatalf("%s after the kill: status %d\n%s", args[0], code, out)
	}
	for _, line := range []string{
		fmt.Sprintf("removed %d file(s) it created (", want.files),
		fmt.Sprintf("removed %d temporary file(s) that interrupted writes left: ", want.temps),
		fmt.Sprintf("(%d B)", want.tempBytes),
		fmt.Sprintf("temp_swept=%d temp_swept_bytes=%d", want.temps, want.tempBytes),
	} {
		if !wrappedContains(out, line) {
			t.Errorf("the output does not say %q:\n%s", line, out)
		}
	}
	if want.files > 0 && !wrappedContains(out, fmt.Sprintf("(%d B), dropped", want.fileBytes)) {
		t.Errorf("the output does not say the %d B of the removed outputs:\n%s", want.fileBytes, out)
	}
}

// tempBytes returns the size of the temporary files in the directory root.
func tempBytes(root string) int64 {
	var n int64
	m, _ := filepath.Glob(filepath.Join(root, storage.TempPrefix+"*"))
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// writeBigBundle writes and seals bundle b.big in dir: n files f0.bin ...
// of about size bytes each, each starting with random text so that no two
// runs' files are alike.
func writeBigBundle(t *testing.T, dir string, n, size int) {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("f%d.bin", i)] = rand.Text() + strings.Repeat("x", size)
	}
	writeBundle(t, dir, "b.big", files)
}
