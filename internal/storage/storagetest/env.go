package storagetest

import (
	"os"
	"strings"
	"testing"
)

// ServerEnv returns the values of the environment variables names, which
// describe a real test server (scripts/test-servers writes them; scripts/test
// sources them). When one is unset the test is skipped with a message, except
// under CI (CI=true), where a missing server is a failure: CI must prove the
// adapters against real servers.
func ServerEnv(t testing.TB, server string, names ...string) []string {
	t.Helper()
	vals := make([]string, len(names))
	var missing []string
	for i, name := range names {
		vals[i] = os.Getenv(name)
		if vals[i] == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		msg := server + " test server not configured (" + strings.Join(missing, ", ") +
			" unset): run scripts/test, or scripts/test-servers start and source .test-servers/env"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return vals
}
