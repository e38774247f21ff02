package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/notify"
	"github.com/distributor-dev/distributor/internal/report"
)

// webhook is a webhook receiver on loopback that answers every request with
// status and records what it got.
type webhook struct {
	URL    string
	mu     sync.Mutex
	status int
	got    []webhookDelivery
}

type webhookDelivery struct {
	path   string
	header http.Header
	body   []byte
}

func newWebhook(t *testing.T, status int) *webhook {
	t.Helper()
	h := &webhook{status: status}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, webhookDelivery{path: r.URL.Path, header: r.Header.Clone(), body: body})
		status := h.status
		h.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// take returns and forgets the deliveries received so far.
func (h *webhook) take() []webhookDelivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	got := h.got
	h.got = nil
	return got
}

func (d webhookDelivery) payload(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(d.body, &m); err != nil {
		t.Fatalf("body %q: %v", d.body, err)
	}
	return m
}

type notifyFixture struct {
	dir    string
	cfg    *config.Config
	app    *App
	bundle string
	env    map[string]string
}

// newNotifyFixture writes and seals a bundle and a configuration with one local
// destination and the given notifications block.
func newNotifyFixture(t *testing.T, notifications string) *notifyFixture {
	t.Helper()
	dir := t.TempDir()
	f := &notifyFixture{dir: dir, bundle: filepath.Join(dir, "bundle"), env: map[string]string{}}
	if err := os.MkdirAll(f.bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.bundle, "report.md"), []byte("# Report\n\nSunny.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Seal(context.Background(), f.bundle, "weather.tomorrow", time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	yaml := `
pipelines:
  - id: weather.daily
    source: bundle
    destinations: [latest]
destinations:
  - id: latest
    backend: local
    path: www
    links: {base_url: "https://reports.example.com/w/", pretty: true}
    paths: {rename: {report.md: index.md}}
notifications:
` + notifications
	cfgPath := filepath.Join(dir, "distributor.yaml")
	cfg, err := config.DecodeEnv([]byte(yaml), cfgPath, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	f.cfg = cfg
	f.app = New("v1.2.3", nil)
	f.app.Now = func() time.Time { return time.Date(2026, 6, 20, 8, 0, 0, 0, time.UTC) }
	f.app.Getenv = func(k string) string { return f.env[k] }
	return f
}

func (f *notifyFixture) run(t *testing.T, opts RunOptions) *report.Run {
	t.Helper()
	rep, err := f.app.Run(context.Background(), f.cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func soleDestination(t *testing.T, rep *report.Run) *report.Destination {
	t.Helper()
	if len(rep.Pipelines) != 1 || len(rep.Pipelines[0].Destinations) != 1 {
		t.Fatalf("report: %+v", rep.Pipelines)
	}
	return &rep.Pipelines[0].Destinations[0]
}

func TestNotifyPublishedBodyAndSignature(t *testing.T) {
	h := newWebhook(t, http.StatusOK)
	f := newNotifyFixture(t, `
  - id: ops
    webhook: {url: "`+h.URL+`/ops", secret_env: HOOK_SECRET}
    on: [published, failed]
`)
	f.env["HOOK_SECRET"] = "correct horse"
	rep := f.run(t, RunOptions{})
	d := soleDestination(t, rep)
	if d.Action != "publish_new" || d.Status != report.StatusOK {
		t.Fatalf("destination %s %s", d.Action, d.Status)
	}
	want := []report.Notification{{ID: "ops", Event: "published", Status: "sent"}}
	if len(d.Notifications) != 1 || d.Notifications[0] != want[0] {
		t.Errorf("notifications %+v, want %+v", d.Notifications, want)
	}
	got := h.take()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	g := got[0]
	if g.path != "/ops" || g.header.Get("Content-Type") != "application/json" || g.header.Get("User-Agent") != "distributor/v1.2.3" {
		t.Errorf("path %s, headers %v", g.path, g.header)
	}
	sig := strings.TrimPrefix(g.header.Get(notify.SignatureHeader), "sha256=")
	mac := hmac.New(sha256.New, []byte("correct horse"))
	mac.Write(g.body)
	if sig != hex.EncodeToString(mac.Sum(nil)) {
		t.Errorf("signature %q does not verify with the secret", sig)
	}
	p := g.payload(t)
	keys := []string{"event", "pipeline_id", "destination_id", "action", "root", "primary_url", "counts", "source", "error", "urls"}
	if len(p) != len(keys) {
		t.Errorf("body has %d fields, want exactly %v: %s", len(p), keys, g.body)
	}
	for k, want := range map[string]any{
		"event": "published", "pipeline_id": "weather.daily", "destination_id": "latest",
		"action": "publish_new", "root": filepath.Join(f.dir, "www"),
		"primary_url": "https://reports.example.com/w/", "error": nil,
	} {
		if p[k] != want {
			t.Errorf("%s = %#v, want %#v", k, p[k], want)
		}
	}
	counts, _ := p["counts"].(map[string]any)
	if counts["created"] != float64(1) || counts["deleted"] != float64(0) {
		t.Errorf("counts %v", p["counts"])
	}
	urls, _ := p["urls"].(map[string]any)
	if fmt.Sprint(urls) != "map[deleted:[] deleted_total:0 truncated:false written:[https://reports.example.com/w/] written_total:1]" {
		t.Errorf("urls %v", p["urls"])
	}
	src, _ := p["source"].(map[string]any)
	if src["id"] != "weather.tomorrow" || !strings.HasPrefix(src["digest"].(string), "sha256:") || src["path"] != f.bundle {
		t.Errorf("source %v", p["source"])
	}
	if strings.Contains(string(g.body), "correct horse") {
		t.Errorf("the body holds the secret")
	}
}

func TestNotifyEventFiltering(t *testing.T) {
	published, skipped, failed := newWebhook(t, 200), newWebhook(t, 200), newWebhook(t, 200)
	f := newNotifyFixture(t, `
  - id: on-published
    webhook: {url: "`+published.URL+`"}
    on: [published]
  - id: on-skipped
    webhook: {url: "`+skipped.URL+`"}
    on: [skipped]
  - id: on-failed
    webhook: {url: "`+failed.URL+`"}
    on: [failed]
`)
	d := soleDestination(t, f.run(t, RunOptions{}))
	if len(d.Notifications) != 1 || d.Notifications[0].ID != "on-published" {
		t.Errorf("first run notifications %+v", d.Notifications)
	}
	if n := [3]int{len(published.take()), len(skipped.take()), len(failed.take())}; n != [3]int{1, 0, 0} {
		t.Errorf("first run deliveries (published, skipped, failed) = %v, want [1 0 0]", n)
	}

	d = soleDestination(t, f.run(t, RunOptions{}))
	if d.Action != "skip_same" || len(d.Notifications) != 1 || d.Notifications[0].Event != "skipped" {
		t.Errorf("second run %s, notifications %+v", d.Action, d.Notifications)
	}
	if n := [3]int{len(published.take()), len(skipped.take()), len(failed.take())}; n != [3]int{0, 1, 0} {
		t.Errorf("second run deliveries = %v, want [0 1 0]", n)
	}
}

func TestNotifyNothingOnDryRun(t *testing.T) {
	h := newWebhook(t, 200)
	f := newNotifyFixture(t, `
  - id: ops
    webhook: {url: "`+h.URL+`"}
    on: [published, skipped, failed]
`)
	d := soleDestination(t, f.run(t, RunOptions{DryRun: true}))
	if d.Status != report.StatusPlanned || len(d.Notifications) != 0 {
		t.Errorf("status %s, notifications %+v", d.Status, d.Notifications)
	}
	// A dry run that fails (unmanaged content in the way) sends nothing either.
	if err := os.MkdirAll(filepath.Join(f.dir, "www"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "www", "index.html"), []byte("hand made"), 0o644); err != nil {
		t.Fatal(err)
	}
	d = soleDestination(t, f.run(t, RunOptions{DryRun: true}))
	if d.Action != "fail_unmanaged" || len(d.Notifications) != 0 {
		t.Errorf("action %s, notifications %+v", d.Action, d.Notifications)
	}
	if got := h.take(); len(got) != 0 {
		t.Errorf("dry runs delivered %d notifications", len(got))
	}
}

func TestNotifyFailedDestination(t *testing.T) {
	h := newWebhook(t, 200)
	f := newNotifyFixture(t, `
  - id: ops
    webhook: {url: "`+h.URL+`"}
    on: [failed]
`)
	if err := os.MkdirAll(filepath.Join(f.dir, "www"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "www", "index.html"), []byte("hand made"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := f.run(t, RunOptions{})
	d := soleDestination(t, rep)
	if d.Action != "fail_unmanaged" || len(d.Notifications) != 1 || d.Notifications[0].Status != "sent" {
		t.Fatalf("action %s, notifications %+v", d.Action, d.Notifications)
	}
	got := h.take()
	if len(got) != 1 {
		t.Fatalf("%d deliveries", len(got))
	}
	p := got[0].payload(t)
	if p["event"] != "failed" || p["action"] != "fail_unmanaged" || p["error"] == nil {
		t.Errorf("payload %s", got[0].body)
	}
}

func TestNotifyInvalidBundleRaisesFailed(t *testing.T) {
	ok, broken := newWebhook(t, 200), newWebhook(t, 500)
	f := newNotifyFixture(t, `
  - id: ops
    webhook: {url: "`+ok.URL+`"}
    on: [failed]
  - id: broken
    webhook: {url: "`+broken.URL+`"}
    on: [published]
`)
	// Tamper with the bundle after sealing: it no longer matches its manifest.
	if err := os.WriteFile(filepath.Join(f.bundle, "report.md"), []byte("# Changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := f.run(t, RunOptions{})
	p := rep.Pipelines[0]
	if p.Error == nil || len(p.Destinations) != 0 {
		t.Fatalf("pipeline %+v", p)
	}
	got := ok.take()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1 (one per destination of the pipeline)", len(got))
	}
	body := got[0].payload(t)
	if body["event"] != "failed" || body["destination_id"] != "latest" || body["action"] != "" ||
		!strings.Contains(body["error"].(string), "report.md") {
		t.Errorf("payload %s", got[0].body)
	}
	if len(broken.take()) != 0 {
		t.Errorf("a notification not subscribed to failed was sent")
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings %v", p.Warnings)
	}
	// Not in a dry run.
	f.run(t, RunOptions{DryRun: true})
	if n := len(ok.take()); n != 0 {
		t.Errorf("a dry run delivered %d notifications", n)
	}
}

func TestNotifyInvalidBundleFailedDeliveryIsAWarning(t *testing.T) {
	h := newWebhook(t, 400)
	f := newNotifyFixture(t, `
  - id: ops
    webhook: {url: "`+h.URL+`"}
    on: [failed]
`)
	if err := os.Remove(filepath.Join(f.bundle, "report.md")); err != nil {
		t.Fatal(err)
	}
	p := f.run(t, RunOptions{}).Pipelines[0]
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "notification ops (failed) for destination latest failed: ") ||
		!strings.Contains(p.Warnings[0], "HTTP 400") {
		t.Errorf("warnings %q", p.Warnings)
	}
}

func TestNotifyFailureDoesNotChangeTheOutcome(t *testing.T) {
	h := newWebhook(t, http.StatusBadRequest)
	f := newNotifyFixture(t, `
  - id: ops
    webhook: {url: "`+h.URL+`/hook/s3cr3t-token"}
    on: [published]
`)
	rep := f.run(t, RunOptions{})
	d := soleDestination(t, rep)
	if d.Status != report.StatusOK || rep.Failed() || rep.Summary.Failed != 0 {
		t.Errorf("status %s, failed %v", d.Status, rep.Failed())
	}
	if len(d.Notifications) != 1 || d.Notifications[0].Status != "failed" || !strings.Contains(d.Notifications[0].Error, "HTTP 400") {
		t.Errorf("notifications %+v", d.Notifications)
	}
	if strings.Contains(d.Notifications[0].Error, "s3cr3t-token") {
		t.Errorf("the error shows the URL path: %q", d.Notifications[0].Error)
	}
	if n := len(h.take()); n != 1 {
		t.Errorf("%d deliveries, want 1 (no retry on 4xx)", n)
	}
}

func TestCheckNotifications(t *testing.T) {
	f := newNotifyFixture(t, `
  - id: ops
    webhook: {url: "http://127.0.0.1:1/", secret_env: OPS_SECRET}
    on: [published]
  - id: plain
    webhook: {url: "http://127.0.0.1:1/"}
    on: [published]
`)
	err := f.app.CheckNotifications(f.cfg)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "OPS_SECRET") || !strings.Contains(err.Error(), "notification ops") {
		t.Fatalf("error %v, want a *UsageError naming OPS_SECRET", err)
	}
	f.env["OPS_SECRET"] = "x"
	if err := f.app.CheckNotifications(f.cfg); err != nil {
		t.Errorf("with the secret set: %v", err)
	}
}

func TestNotifyMissingSecretIsNotSent(t *testing.T) {
	h := newWebhook(t, 200)
	f := newNotifyFixture(t, `
  - id: ops
    webhook: {url: "`+h.URL+`", secret_env: OPS_SECRET}
    on: [published]
`)
	d := soleDestination(t, f.run(t, RunOptions{}))
	if len(d.Notifications) != 1 || d.Notifications[0].Status != "failed" || !strings.Contains(d.Notifications[0].Error, "OPS_SECRET") {
		t.Errorf("notifications %+v", d.Notifications)
	}
	if n := len(h.take()); n != 0 {
		t.Errorf("an unsigned body was sent for a signed webhook")
	}
}
