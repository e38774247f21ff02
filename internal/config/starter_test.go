package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStarterDecodes: the configuration 'config init' writes is valid as
// written, whatever the environment holds.
func TestStarterDecodes(t *testing.T) {
	cfg, err := DecodeEnv([]byte(Starter), filepath.Join(t.TempDir(), "distributor.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Pipelines) != 1 || len(cfg.Destinations) != 1 || cfg.Destinations[0].Backend != "local" {
		t.Errorf("starter: %+v", cfg)
	}
}

// TestStarterMetricsFileExample: the commented metrics_file line is valid
// once uncommented.
func TestStarterMetricsFileExample(t *testing.T) {
	const line = "# metrics_file: "
	if !strings.Contains(Starter, "\n"+line) {
		t.Fatalf("the starter has no %q line", line)
	}
	data := strings.Replace(Starter, "\n"+line, "\nmetrics_file: ", 1)
	cfg, err := DecodeEnv([]byte(data), filepath.Join(t.TempDir(), "distributor.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MetricsFile != "/var/lib/node_exporter/textfile/distributor.prom" {
		t.Errorf("MetricsFile = %q", cfg.MetricsFile)
	}
}
