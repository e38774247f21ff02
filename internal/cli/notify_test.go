package cli

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// cliRun runs the CLI in-process and returns its exit status and output.
func cliRun(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Execute(context.Background(), args, Env{Stdout: &stdout, Stderr: &stderr, Version: "v0.0.0-test",
		Getenv: func(k string) string { return env[k] }})
	return code, stdout.String(), stderr.String()
}

// receiver is a webhook endpoint on loopback.
type receiver struct {
	URL    string
	mu     sync.Mutex
	status int
	bodies [][]byte
	sigs   []string
}

func newReceiver(t *testing.T, status int) *receiver {
	t.Helper()
	r := &receiver{status: status}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.sigs = append(r.sigs, req.Header.Get("X-Distributor-Signature"))
		status := r.status
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hook"
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

// notifyProject writes a bundle and a configuration whose notification
// posts to url, signed with the secret in $HOOK_SECRET, and seals the bundle.
func notifyProject(t *testing.T, url string) (dir, cfg string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bundle"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bundle", "report.md"), []byte("# Report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "distributor.yaml")
	yaml := `pipelines:
  - {id: weather.daily, source: bundle, destinations: [latest]}
destinations:
  - {id: latest, backend: local, path: www}
notifications:
  - id: ops
    webhook: {url: "` + url + `", secret_env: HOOK_SECRET}
    on: [published, failed]
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cliRun(t, nil, "bundle", "seal", filepath.Join(dir, "bundle"), "--id", "weather.tomorrow",
		"--created", "2026-06-19T12:00:00Z"); code != 0 {
		t.Fatalf("seal: %d %s", code, stderr)
	}
	return dir, cfg
}

func TestRunSendsSignedNotification(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	_, cfg := notifyProject(t, r.URL)
	env := map[string]string{"HOOK_SECRET": "hunter2"}
	code, stdout, stderr := cliRun(t, env, "run", "--config", cfg, "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var rep struct {
		Pipelines []struct {
			Destinations []struct {
				Notifications []map[string]string `json:"notifications"`
			} `json:"destinations"`
		} `json:"pipelines"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	got := rep.Pipelines[0].Destinations[0].Notifications
	if len(got) != 1 || got[0]["id"] != "ops" || got[0]["event"] != "published" || got[0]["status"] != "sent" {
		t.Errorf("notifications %v", got)
	}
	if r.count() != 1 {
		t.Fatalf("%d deliveries", r.count())
	}
	mac := hmac.New(sha256.New, []byte("hunter2"))
	mac.Write(r.bodies[0])
	if r.sigs[0] != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		t.Errorf("signature %q does not verify", r.sigs[0])
	}
	if strings.Contains(stdout+stderr, "hunter2") {
		t.Errorf("the secret appears in the output")
	}
}

func TestRunFailingNotificationIsAWarning(t *testing.T) {
	r := newReceiver(t, http.StatusForbidden)
	_, cfg := notifyProject(t, r.URL)
	code, stdout, stderr := cliRun(t, map[string]string{"HOOK_SECRET": "hunter2"}, "run", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d, want 0: a notification does not change the exit status\n%s\n%s", code, stdout, stderr)
	}
	flat := strings.Join(strings.Fields(stdout), " ") // the report wraps at 80 columns
	if !strings.Contains(flat, "warning: notification ops (published) failed: POST to http://127.0.0.1:") ||
		!strings.Contains(flat, "HTTP 403 Forbidden") {
		t.Errorf("stdout lacks the warning:\n%s", stdout)
	}
	if strings.Contains(stdout, "/hook") {
		t.Errorf("the warning shows the webhook's path:\n%s", stdout)
	}
}

func TestRunMissingWebhookSecretIsAConfigError(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	dir, cfg := notifyProject(t, r.URL)
	code, _, stderr := cliRun(t, nil, "run", "--config", cfg)
	if code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	if !strings.Contains(stderr, "HOOK_SECRET") || !strings.Contains(stderr, "notification ops") {
		t.Errorf("stderr does not name the variable:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "www")); !os.IsNotExist(err) {
		t.Errorf("something was published before the check: %v", err)
	}
	// A dry run needs no secret: it warns and sends nothing.
	code, stdout, stderr := cliRun(t, nil, "run", "--config", cfg, "--dry-run")
	if code != 0 || !strings.Contains(stderr, "HOOK_SECRET") || !strings.Contains(stdout, "dry run") {
		t.Errorf("dry run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if r.count() != 0 {
		t.Errorf("%d deliveries, want none", r.count())
	}
}

func TestConfigSchemaCommand(t *testing.T) {
	code, stdout, _ := cliRun(t, nil, "config", "schema", "--output", "text")
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || doc["$schema"] == nil {
		t.Errorf("config schema: exit %d, output %.200s", code, stdout)
	}
}

func TestCompletionCommand(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := cliRun(t, nil, "completion", shell)
		if code != 0 || !strings.Contains(stdout, "distributor") {
			t.Errorf("completion %s: exit %d, %d bytes, %s", shell, code, len(stdout), stderr)
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		if code, _, _ := cliRun(t, nil, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

func TestCompletionOfIDsAndFlagValues(t *testing.T) {
	_, cfg := notifyProject(t, "http://127.0.0.1:1/")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "run", "--config", cfg, "--pipeline", ""}, "weather.daily\n"},
		{[]string{"__complete", "validate", "--config", cfg, "--pipeline", ""}, "weather.daily\n"},
		{[]string{"__complete", "run", "--config", cfg, "--destination", ""}, "latest\n"},
		{[]string{"__complete", "run", "--output", ""}, "text\njson\n"},
		{[]string{"__complete", "--log-level", ""}, "debug\ninfo\nwarn\nerror\n"},
		{[]string{"__complete", "completion", ""}, "bash\nzsh\nfish\npowershell\n"},
	} {
		code, stdout, _ := cliRun(t, nil, tc.args...)
		if code != 0 || !strings.HasPrefix(stdout, tc.want) {
			t.Errorf("%v: exit %d, got %q, want prefix %q", tc.args, code, stdout, tc.want)
		}
	}
}
