package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// TestSecretsNeverPrinted publishes to an S3 server and a webhook with
// credentials and a signing secret set, at debug log level, in text and
// JSON, successfully and with a rejected credential and a failing webhook:
// no secret value may appear on stdout or stderr.
func TestSecretsNeverPrinted(t *testing.T) {
	const (
		accessKey = "AKIASECRETSENTINEL01"
		secretKey = "s3cr3t-SENTINEL-do-not-print"
		hookKey   = "hook-SENTINEL-do-not-print"
	)
	s3srv := s3test.Start(t)
	hookStatus := http.StatusOK
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(hookStatus)
	}))
	defer hook.Close()

	t.Setenv("AWS_ACCESS_KEY_ID", accessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey)
	t.Setenv("DISTRIBUTOR_TEST_HOOK_SECRET", hookKey)

	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "b"), map[string]string{"index.md": "# Hi\n"})
	if out := distributor(t, dir, "bundle", "seal", filepath.Join(dir, "b"), "--id", "b.one"); out.code != 0 {
		// distributor() passes --config; bundle seal ignores it.
		t.Fatalf("seal: %+v", out)
	}
	conf := fmt.Sprintf(`pipelines:
  - {id: p, source: b, destinations: [bucket]}
destinations:
  - id: bucket
    backend: s3
    path: site
    s3: {bucket: reports, region: us-east-1, endpoint: %s, path_style: true}
notifications:
  - id: ops
    webhook: {url: %s/hook, secret_env: DISTRIBUTOR_TEST_HOOK_SECRET}
    on: [published, skipped, failed]
`, s3srv.URL, hook.URL)
	if err := os.WriteFile(filepath.Join(dir, "distributor.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(name string, res cliResult) {
		t.Helper()
		for _, s := range []string{secretKey, hookKey} {
			if strings.Contains(res.stdout, s) || strings.Contains(res.stderr, s) {
				t.Errorf("%s: a secret was printed\nstdout: %s\nstderr: %s", name, res.stdout, res.stderr)
			}
		}
	}
	res := distributor(t, dir, "--log-level", "debug", "run")
	if res.code != 0 {
		t.Fatalf("run: %+v", res)
	}
	check("text run", res)
	check("json run", distributor(t, dir, "--log-level", "debug", "run", "--output", "json"))
	check("validate", distributor(t, dir, "--log-level", "debug", "validate"))
	check("state show", distributor(t, dir, "--log-level", "debug", "state", "show", "--pipeline", "p", "--destination", "bucket"))
	check("verify", distributor(t, dir, "--log-level", "debug", "verify", "--pipeline", "p", "--destination", "bucket", "--output", "json"))

	// Failures print errors: still no secret.
	hookStatus = http.StatusInternalServerError
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey+"-wrong")
	res = distributor(t, dir, "--log-level", "debug", "run")
	check("failing run", res)
	if strings.Contains(res.stdout+res.stderr, secretKey+"-wrong") {
		t.Errorf("wrong secret printed")
	}
}
