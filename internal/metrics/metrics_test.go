package metrics

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
)

var (
	t1 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	t2 = t1.Add(time.Hour)
)

func ok(p, d string, at time.Time) Sample {
	return Sample{Pipeline: p, Destination: d, Finished: at, Success: true, Status: "ok", Action: "publish_new",
		Duration: 1500 * time.Millisecond, LockWait: 20 * time.Millisecond,
		Outputs: plan.Counts{Created: 3}, WrittenBytes: 1234, Retries: 1}
}

func lines(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func mustContain(t *testing.T, file string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(file, "\n"+w+"\n") {
			t.Errorf("metrics file lacks the line %q:\n%s", w, file)
		}
	}
}

// TestFailedRunKeepsLastSuccess: a failed run updates the last run's
// series but keeps the time of the last success; a destination the run did
// not touch keeps every series of the previous file.
func TestFailedRunKeepsLastSuccess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "distributor.prom")
	if err := Write(path, "v1", []Sample{ok("p", "a", t1), ok("p", "b", t1)}); err != nil {
		t.Fatal(err)
	}
	first := lines(t, path)
	mustContain(t, first,
		`distributor_build_info{version="v1"} 1`,
		`distributor_last_success_timestamp_seconds{pipeline="p",destination="a"} 1796119200`,
		`distributor_last_run_success{pipeline="p",destination="a"} 1`,
		`distributor_last_run_info{pipeline="p",destination="a",status="ok",action="publish_new"} 1`,
		`distributor_last_run_duration_seconds{pipeline="p",destination="a"} 1.5`,
		`distributor_last_run_lock_wait_seconds{pipeline="p",destination="a"} 0.02`,
		`distributor_last_run_outputs{pipeline="p",destination="a",op="create"} 3`,
		`distributor_last_run_outputs{pipeline="p",destination="a",op="delete"} 0`,
		`distributor_last_run_written_bytes{pipeline="p",destination="a"} 1234`,
		`distributor_last_run_retries{pipeline="p",destination="a"} 1`)

	failed := Sample{Pipeline: "p", Destination: "a", Finished: t2, Status: "failed"}
	if err := Write(path, "v2", []Sample{failed}); err != nil {
		t.Fatal(err)
	}
	second := lines(t, path)
	mustContain(t, second,
		`distributor_build_info{version="v2"} 1`,
		`distributor_last_run_timestamp_seconds{pipeline="p",destination="a"} 1796122800`,
		`distributor_last_success_timestamp_seconds{pipeline="p",destination="a"} 1796119200`,
		`distributor_last_run_success{pipeline="p",destination="a"} 0`,
		`distributor_last_run_info{pipeline="p",destination="a",status="failed",action=""} 1`)
	// b was not part of the second run: every one of its lines is kept.
	for _, l := range strings.Split(first, "\n") {
		if strings.Contains(l, `destination="b"`) && !strings.Contains(second, l+"\n") {
			t.Errorf("b's line %q was lost", l)
		}
	}
	if strings.Contains(second, `version="v1"`) {
		t.Error("the old version's build_info line was kept")
	}
}

// TestNeverSucceeded: a destination whose every run failed has no
// last-success series (rather than a made-up 0).
func TestNeverSucceeded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.prom")
	if err := Write(path, "v1", []Sample{{Pipeline: "p", Destination: "a", Finished: t1, Status: "failed"}}); err != nil {
		t.Fatal(err)
	}
	if f := lines(t, path); strings.Contains(f, "distributor_last_success_timestamp_seconds{") {
		t.Errorf("a last-success sample for a destination that never succeeded:\n%s", f)
	}
}

// TestLabelValuesRoundTrip: ids with the characters the format escapes
// survive a write and a read.
func TestLabelValuesRoundTrip(t *testing.T) {
	for _, v := range []string{"plain", `back\slash`, `qu"ote`, "new\nline", `\n`, `,="`} {
		labels := withLabels("", "pipeline", v, "destination", "d")
		got := labelValues(labels[1 : len(labels)-1])
		if got["pipeline"] != v || got["destination"] != "d" {
			t.Errorf("%q: parsed %q", v, got)
		}
	}
}

// TestFromRun: a pipeline that failed as a whole fails each selected
// destination; a refused plan (fail_*) is no success; bytes count only
// what took effect.
func TestFromRun(t *testing.T) {
	item := func(p string, op plan.Op, size int64) plan.Item {
		return plan.Item{Path: p, Op: op, Output: &plan.Output{Size: size}}
	}
	r := &report.Run{Pipelines: []report.Pipeline{
		{PipelineID: "bad", Err: errors.New("sha256 mismatch")},
		{PipelineID: "p", Destinations: []report.Destination{
			{DestinationID: "ok", Status: report.StatusOK, Plan: &plan.Plan{Action: plan.PublishNew, Items: []plan.Item{
				item("a", plan.OpCreate, 10), item("b", plan.OpOverwrite, 5), item("c", plan.OpUnchanged, 100)}}},
			{DestinationID: "partial", Status: report.StatusFailed, Done: []string{"a"}, Plan: &plan.Plan{Action: plan.PublishNew, Items: []plan.Item{
				item("a", plan.OpCreate, 10), item("b", plan.OpCreate, 5)}}},
			{DestinationID: "refused", Status: report.StatusOK, Plan: &plan.Plan{Action: plan.FailUnmanaged}},
		}},
	}}
	got := FromRun(r, t1, func(p string) []string {
		if p == "bad" {
			return []string{"x", "y"}
		}
		return nil
	})
	want := map[string]struct {
		success bool
		bytes   int64
	}{"bad/x": {false, 0}, "bad/y": {false, 0}, "p/ok": {true, 15}, "p/partial": {false, 10}, "p/refused": {false, 0}}
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d: %+v", len(got), len(want), got)
	}
	for _, s := range got {
		w, found := want[s.Pipeline+"/"+s.Destination]
		if !found || s.Success != w.success || s.WrittenBytes != w.bytes {
			t.Errorf("%s/%s: success %v, %d bytes; want %+v", s.Pipeline, s.Destination, s.Success, s.WrittenBytes, w)
		}
	}
}

// TestConcurrentReaderSeesWholeFiles: a reader polling the file while it
// is rewritten sees either complete version, never a part.
func TestConcurrentReaderSeesWholeFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.prom")
	a, b := []Sample{ok("p", "a", t1)}, []Sample{ok("p", "a", t2)}
	versions := map[string]bool{string(render("v", a, nil)): true, string(render("v", b, nil)): true}
	if err := Write(path, "v", a); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			s := a
			if i%2 == 1 {
				s = b
			}
			if err := Write(path, "v", s); err != nil {
				t.Error(err)
				break
			}
		}
		close(stop)
	}()
	reads := 0
	for done := false; !done; reads++ {
		select {
		case <-stop:
			done = true
		default:
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !versions[string(data)] {
			t.Fatalf("read %d: a file that is neither version (%d bytes)", reads, len(data))
		}
	}
	wg.Wait()
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".distributor-metrics-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	t.Logf("%d reads during 300 writes", reads)
}
