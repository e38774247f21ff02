package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeMetricsFile: metrics_file is a local path resolved like the
// others (against the configuration file's directory, ~/ and ${VAR}
// expanded), absent means none, and a value that is not a usable path is a
// problem at its line.
func TestDecodeMetricsFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(t.TempDir(), "conf")
	file := filepath.Join(dir, "distributor.yaml")
	getenv := func(k string) string {
		if k == "TEXTFILE_DIR" {
			return "/var/lib/node_exporter/textfile"
		}
		return ""
	}
	for _, tc := range []struct{ value, want string }{
		{"", ""},
		{"metrics_file: distributor.prom\n", filepath.Join(dir, "distributor.prom")},
		{"metrics_file: ../textfile/distributor.prom\n", filepath.Join(filepath.Dir(dir), "textfile/distributor.prom")},
		{"metrics_file: /var/lib/distributor.prom\n", "/var/lib/distributor.prom"},
		{"metrics_file: ~/distributor.prom\n", filepath.Join(home, "distributor.prom")},
		{"metrics_file: ${TEXTFILE_DIR}/distributor.prom\n", "/var/lib/node_exporter/textfile/distributor.prom"},
	} {
		cfg, err := DecodeEnv([]byte(minimal+tc.value), file, getenv)
		if err != nil {
			t.Errorf("%q: %v", tc.value, err)
			continue
		}
		if cfg.MetricsFile != tc.want {
			t.Errorf("%q: MetricsFile = %q, want %q", tc.value, cfg.MetricsFile, tc.want)
		}
	}
	for _, tc := range []struct{ value, msg string }{
		{`metrics_file: ""`, "must not be empty"},
		{"metrics_file: [a.prom]", "must be a string"},
		{"metrics_file: ./{pipeline_id}.prom", "placeholder {pipeline_id} is not allowed here"},
		{"metrics_file: ~other/a.prom", "only ~/"},
	} {
		_, err := DecodeEnv([]byte(minimal+tc.value+"\n"), file, getenv)
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) != 1 {
			t.Errorf("%q: want one problem, got %v", tc.value, err)
			continue
		}
		if p := ce.Problems[0]; p.Line != 9 || p.Field != "metrics_file" || !strings.Contains(p.Msg, tc.msg) {
			t.Errorf("%q: problem %+v, want line 9, field metrics_file, %q", tc.value, p, tc.msg)
		}
	}
}
