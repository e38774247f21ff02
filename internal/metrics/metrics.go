// Package metrics writes a run's result as a Prometheus text file (format
// 0.0.4) for node_exporter's textfile collector, per pipeline and
// destination; the last success time survives failed runs.
//
// The file is replaced atomically (temporary file, synced, renamed), so a
// reader never sees a part. Destinations a run did not touch keep their
// series from the previous file.
package metrics

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/atomicfile"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
)

// Sample is the last run of one destination of one pipeline.
type Sample struct {
	Pipeline, Destination string
	Finished              time.Time
	// Success is false when the destination or its pipeline failed, or its
	// plan refused (a fail_* action).
	Success bool
	// Action is "" when the destination failed before planning.
	Status, Action string
	Duration       time.Duration
	LockWait       time.Duration
	// Outputs counts what took effect, by operation.
	Outputs      plan.Counts
	WrittenBytes int64
	Retries      int
}

// FromRun turns a run that finished at finished into samples, one per
// destination; a pipeline that failed as a whole fails each destination
// destinationsOf lists for it.
func FromRun(r *report.Run, finished time.Time, destinationsOf func(pipeline string) []string) []Sample {
	var out []Sample
	for _, p := range r.Pipelines {
		if p.Err != nil && len(p.Destinations) == 0 {
			for _, id := range destinationsOf(p.PipelineID) {
				out = append(out, Sample{Pipeline: p.PipelineID, Destination: id, Finished: finished, Status: report.StatusFailed})
			}
			continue
		}
		for _, d := range p.Destinations {
			s := Sample{Pipeline: p.PipelineID, Destination: d.DestinationID, Finished: finished, Status: d.Status,
				Duration: d.Duration, LockWait: d.LockWait, Outputs: d.Counts, Retries: d.Retries}
			if d.Plan != nil {
				s.Action = string(d.Plan.Action)
				s.WrittenBytes = writtenBytes(d)
			}
			s.Success = p.Err == nil && d.Status == report.StatusOK && (d.Plan == nil || !d.Plan.Action.Failed())
			out = append(out, s)
		}
	}
	return out
}

func writtenBytes(d report.Destination) int64 {
	done := map[string]bool{}
	for _, p := range d.Done {
		done[p] = true
	}
	var n int64
	for _, it := range d.Plan.Items {
		if (it.Op == plan.OpCreate || it.Op == plan.OpOverwrite) && it.Output != nil &&
			(d.Status == report.StatusOK || done[it.Path]) {
			n += it.Output.Size
		}
	}
	return n
}

// Write replaces the metrics file at path with this run's samples over the previous file's series.
func Write(path, version string, samples []Sample) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("metrics file %s: %w", path, err)
	}
	// The temporary file's name does not end in .prom, so node_exporter's
	// collector ignores it.
	if err := atomicfile.Write(path, ".distributor-metrics-*.tmp", render(version, samples, parse(old))); err != nil {
		return fmt.Errorf("metrics file %s: %w", path, err)
	}
	return nil
}

// family is one metric: its name, help and how a sample gives its lines.
type family struct {
	name, help string
	lines      func(s Sample, labels string, prev series) []string
}

// series is a previous file's lines of one destination, by family.
type series struct {
	lines       map[string][]string
	lastSuccess string
}

func one(name, help string, v func(Sample) float64) family {
	return family{name, help, func(s Sample, l string, _ series) []string { return []string{sample(name, l, v(s))} }}
}

var families = []family{
	one("distributor_last_run_timestamp_seconds", "When the destination's last run ended, in seconds since the Unix epoch.",
		func(s Sample) float64 { return unix(s.Finished) }),
	{"distributor_last_success_timestamp_seconds", "When a run of the destination last succeeded, in seconds since the Unix epoch (kept by failed runs).",
		func(s Sample, l string, p series) []string {
			switch {
			case s.Success:
				return []string{sample("distributor_last_success_timestamp_seconds", l, unix(s.Finished))}
			case p.lastSuccess != "":
				return []string{"distributor_last_success_timestamp_seconds" + l + " " + p.lastSuccess}
			}
			return nil
		}},
	one("distributor_last_run_success", "Whether the destination's last run succeeded (1) or failed (0).",
		func(s Sample) float64 { return b2f(s.Success) }),
	{"distributor_last_run_info", "The status and plan action of the destination's last run (always 1).",
		func(s Sample, l string, _ series) []string {
			return []string{sample("distributor_last_run_info", withLabels(l, "status", s.Status, "action", s.Action), 1)}
		}},
	one("distributor_last_run_duration_seconds", "How long the destination's last run took.",
		func(s Sample) float64 { return s.Duration.Seconds() }),
	one("distributor_last_run_lock_wait_seconds", "How long the destination's last run took to take the root's lock.",
		func(s Sample) float64 { return s.LockWait.Seconds() }),
	{"distributor_last_run_outputs", "Outputs of the destination's last run that took effect, by operation.",
		func(s Sample, l string, _ series) []string {
			c := s.Outputs
			var out []string
			for _, op := range []struct {
				name string
				n    int
			}{{"create", c.Created}, {"overwrite", c.Overwritten}, {"unchanged", c.Unchanged}, {"delete", c.Deleted}, {"retain", c.Retained}} {
				out = append(out, sample("distributor_last_run_outputs", withLabels(l, "op", op.name), float64(op.n)))
			}
			return out
		}},
	one("distributor_last_run_written_bytes", "Bytes of outputs the destination's last run wrote.",
		func(s Sample) float64 { return float64(s.WrittenBytes) }),
	one("distributor_last_run_retries", "Storage operations the destination's last run repeated after a transient failure.",
		func(s Sample) float64 { return float64(s.Retries) }),
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func unix(t time.Time) float64 { return math.Round(float64(t.UnixMilli())) / 1000 }

func sample(name, labels string, v float64) string {
	return name + labels + " " + strconv.FormatFloat(v, 'f', -1, 64)
}

type key struct{ pipeline, destination string }

// withLabels adds name="value" pairs to a label set ("" or "{...}").
func withLabels(labels string, kv ...string) string {
	var pairs []string
	if labels != "" {
		pairs = append(pairs, labels[1:len(labels)-1])
	}
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, kv[i]+`="`+labelEscaper.Replace(kv[i+1])+`"`)
	}
	return "{" + strings.Join(pairs, ",") + "}"
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func render(version string, samples []Sample, prev map[key]series) []byte {
	current := map[key]Sample{}
	keys := map[key]bool{}
	for _, s := range samples {
		k := key{s.Pipeline, s.Destination}
		current[k], keys[k] = s, true
	}
	for k := range prev {
		keys[k] = true
	}
	sorted := slices.SortedFunc(maps.Keys(keys), func(a, b key) int {
		return cmp.Or(strings.Compare(a.pipeline, b.pipeline), strings.Compare(a.destination, b.destination))
	})
	var b strings.Builder
	b.WriteString("# HELP distributor_build_info The version of distributor that wrote this file (always 1).\n")
	b.WriteString("# TYPE distributor_build_info gauge\n")
	b.WriteString(sample("distributor_build_info", withLabels("", "version", version), 1) + "\n")
	for _, f := range families {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", f.name, f.help, f.name)
		for _, k := range sorted {
			lines := prev[k].lines[f.name]
			if s, ok := current[k]; ok {
				lines = f.lines(s, withLabels("", "pipeline", k.pipeline, "destination", k.destination), prev[k])
			}
			for _, l := range lines {
				b.WriteString(l + "\n")
			}
		}
	}
	return []byte(b.String())
}

// parse reads a previous metrics file's series, dropping unknown lines.
func parse(data []byte) map[key]series {
	known := map[string]bool{}
	for _, f := range families {
		known[f.name] = true
	}
	out := map[key]series{}
	for _, line := range strings.Split(string(data), "\n") {
		name, labels, ok := strings.Cut(line, "{")
		if !ok || !known[name] {
			continue
		}
		end := strings.LastIndex(labels, "} ")
		if end < 0 {
			continue
		}
		l := labelValues(labels[:end])
		k := key{l["pipeline"], l["destination"]}
		if k.pipeline == "" || k.destination == "" {
			continue
		}
		s, ok := out[k]
		if !ok {
			s = series{lines: map[string][]string{}}
		}
		s.lines[name] = append(s.lines[name], line)
		if name == "distributor_last_success_timestamp_seconds" {
			s.lastSuccess = strings.TrimSpace(labels[end+2:])
		}
		out[k] = s
	}
	return out
}

// labelValues parses `a="x",b="y"` (values escaped) into a map.
func labelValues(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		name, rest, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		var v strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
				if rest[i] == 'n' {
					v.WriteByte('\n')
					continue
				}
			}
			v.WriteByte(rest[i])
		}
		if i >= len(rest) {
			break
		}
		out[strings.TrimPrefix(name, ",")] = v.String()
		s = strings.TrimPrefix(rest[i+1:], ",")
	}
	return out
}
