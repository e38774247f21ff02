package config

import (
	"fmt"
	"strings"
)

// EnvConfig is the environment variable that names the configuration file
// when no --config flag is given.
const EnvConfig = "DISTRIBUTOR_CONFIG"

// DefaultFile is the configuration file used when neither the flag nor
// DISTRIBUTOR_CONFIG names one. It is relative to the working directory.
const DefaultFile = "distributor.yaml"

// Resolve picks the configuration file: flagPath when non-empty, otherwise
// getenv(EnvConfig) when non-empty, otherwise DefaultFile. getenv is usually
// os.Getenv; nil means the environment is not consulted. The path is returned
// as given (not made absolute) so messages show what the user wrote. A value
// made only of white space is an error, as it is surely a mistake.
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
