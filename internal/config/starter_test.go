package config

import (
	"path/filepath"
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
