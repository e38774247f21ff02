package config

import (
	_ "embed"
	"fmt"
	"strings"
)

// EnvConfig names the configuration file when no --config flag is given.
const EnvConfig = "DISTRIBUTOR_CONFIG"

// DefaultFile is the configuration file when neither names one.
const DefaultFile = "distributor.yaml"

// Resolve picks the configuration file: flagPath, else getenv(EnvConfig)
// (getenv may be nil), else DefaultFile, as given so that messages show
// what the user wrote. A blank value is an error: surely a mistake.
func Resolve(flagPath string, getenv func(string) string) (string, error) {
	if flagPath != "" {
		if strings.TrimSpace(flagPath) == "" {
			return "", fmt.Errorf("--config %q: blank path", flagPath)
		}
		return flagPath, nil
	}
	if getenv != nil {
		if v := getenv(EnvConfig); v != "" {
			if strings.TrimSpace(v) == "" {
				return "", fmt.Errorf("%s=%q: blank path", EnvConfig, v)
			}
			return v, nil
		}
	}
	return DefaultFile, nil
}

// Starter is the commented starter configuration `distributor config init`
// writes (starter.yaml): one pipeline publishing ./out to a local directory,
// which `distributor validate` accepts (with a warning until ./out exists).
//
//go:embed starter.yaml
var Starter string
