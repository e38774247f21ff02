package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
)

// recorder is a webhook endpoint on loopback that answers with the next
// status of its script (the last one repeats) and records every request.
type recorder struct {
	mu       sync.Mutex
	statuses []int
	reqs     []recorded
}

type recorded struct {
	header http.Header
	body   []byte
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{header: req.Header.Clone(), body: body})
	status := http.StatusOK
	if len(r.statuses) > 0 {
		status = r.statuses[0]
		if len(r.statuses) > 1 {
			r.statuses = r.statuses[1:]
		}
	}
	r.mu.Unlock()
	w.WriteHeader(status)
	_, _ = io.WriteString(w, http.StatusText(status)+" from the test server\nsecond line")
}

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

func serve(t *testing.T, statuses ...int) (*recorder, string) {
	t.Helper()
	rec := &recorder{statuses: statuses}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv.URL + "/hooks/distributor"
}

// fastSender retries without waiting and records the backoff it was asked for.
func fastSender(waits *[]int) *Sender {
	return &Sender{Client: &http.Client{}, UserAgent: "distributor/v9.9.9", Timeout: 5 * time.Second,
		Backoff: func(n int) time.Duration {
			if waits != nil {
				*waits = append(*waits, n)
			}
			return 0
		}}
}

func TestEventOf(t *testing.T) {
	for _, tc := range []struct {
		action plan.Action
		status string
		want   string
	}{
		{plan.PublishNew, report.StatusOK, "published"},
		{plan.UpsertAdditive, report.StatusOK, "published"},
		{plan.ReplaceCatalog, report.StatusOK, "published"},
		{plan.ForceReplace, report.StatusOK, "published"},
		{plan.SkipSame, report.StatusOK, "skipped"},
		{plan.FailUnmanaged, report.StatusFailed, "failed"},
		{plan.FailConflict, report.StatusFailed, "failed"},
		{plan.PublishNew, report.StatusFailed, "failed"}, // the write failed
		{"", report.StatusFailed, "failed"},              // failed before planning
		{plan.PublishNew, report.StatusPlanned, ""},      // dry run
		{plan.FailConflict, report.StatusPlanned, "failed"},
	} {
		d := &report.Destination{DestinationID: "d", Status: tc.status}
		if tc.action != "" {
			d.Plan = &plan.Plan{Action: tc.action}
		}
		ev, ok := EventOf(&report.Pipeline{PipelineID: "p"}, d)
		if ok != (tc.want != "") || ev.Event != tc.want {
			t.Errorf("EventOf(%q, %q) = %q, %v, want %q", tc.action, tc.status, ev.Event, ok, tc.want)
		}
	}
}

// The payload of a failed destination counts what was applied, not what
// was planned, and carries the error.
func TestPayloadOfFailedDestination(t *testing.T) {
	pl := &plan.Plan{Action: plan.PublishNew, Items: []plan.Item{
		{Path: "a", Op: plan.OpCreate}, {Path: "b", Op: plan.OpCreate}}}
	d := &report.Destination{DestinationID: "d", Root: "/r", Status: report.StatusFailed, Plan: pl,
		Counts: report.AppliedCounts(pl, []string{"a"}), Err: errors.New("write b: disk full")}
	ev, ok := EventOf(&report.Pipeline{PipelineID: "p", Source: &report.Source{Path: "/b"}}, d)
	if !ok {
		t.Fatal("no event")
	}
	p := ev
	if p.Event != "failed" || p.Action != "publish_new" || p.Counts.Created != 1 || p.Error == nil || *p.Error != "write b: disk full" ||
		p.Source == nil || p.Source.Path != "/b" {
		t.Errorf("payload %+v", p)
	}
}

func TestSendHeadersBodyAndSignature(t *testing.T) {
	rec, url := serve(t, http.StatusNoContent)
	body := []byte(`{"event":"published","pipeline_id":"p"}`)
	secret := []byte("s3cr3t")
	if err := fastSender(nil).Send(context.Background(), Target{URL: url, Secret: secret}, "published", body); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if string(r.body) != string(body) {
		t.Errorf("body %q, want %q", r.body, body)
	}
	for h, want := range map[string]string{
		"Content-Type": "application/json",
		"User-Agent":   "distributor/v9.9.9",
		EventHeader:    "published",
	} {
		if got := r.header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	// A receiver verifies the signature over the exact bytes it received.
	sig, ok := strings.CutPrefix(r.header.Get(SignatureHeader), "sha256=")
	if !ok {
		t.Fatalf("%s = %q, want sha256=...", SignatureHeader, r.header.Get(SignatureHeader))
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, secret)
	m.Write(r.body)
	if !hmac.Equal(got, m.Sum(nil)) {
		t.Errorf("signature does not verify with the secret")
	}
}

func TestSendUnsignedWithoutSecret(t *testing.T) {
	rec, url := serve(t)
	if err := fastSender(nil).Send(context.Background(), Target{URL: url}, "", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	h := rec.requests()[0].header
	if h.Get(SignatureHeader) != "" || h.Get(EventHeader) != "" {
		t.Errorf("unexpected headers %v", h)
	}
}

func TestSendRetries5xxThenSucceeds(t *testing.T) {
	rec, url := serve(t, 500, 503, 200)
	var waits []int
	if err := fastSender(&waits).Send(context.Background(), Target{URL: url, Secret: []byte("k")}, "failed", []byte(`{}`)); err != nil {
		t.Fatalf("want success on the third attempt: %v", err)
	}
	reqs := rec.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if reqs[0].header.Get(SignatureHeader) != reqs[2].header.Get(SignatureHeader) || string(reqs[2].body) != "{}" {
		t.Errorf("a retry must resend the same signed body")
	}
	if len(waits) != 2 || waits[0] != 1 || waits[1] != 2 {
		t.Errorf("backoff asked for retries %v, want [1 2]", waits)
	}
}

func TestSendGivesUpAfterThreeAttempts(t *testing.T) {
	rec, url := serve(t, 502)
	err := fastSender(nil).Send(context.Background(), Target{URL: url}, "published", []byte(`{}`))
	var ne *Error
	if !errors.As(err, &ne) {
		t.Fatalf("error %v, want *Error", err)
	}
	if ne.Attempts != 3 || ne.StatusCode != 502 || len(rec.requests()) != 3 {
		t.Errorf("attempts %d, status %d, requests %d; want 3, 502, 3", ne.Attempts, ne.StatusCode, len(rec.requests()))
	}
	if !strings.Contains(err.Error(), "HTTP 502 Bad Gateway: Bad Gateway from the test server (3 attempt(s))") {
		t.Errorf("message %q", err)
	}
}

func TestSendNoRetryOn4xx(t *testing.T) {
	for _, status := range []int{400, 401, 404, 429} {
		rec, url := serve(t, status)
		var waits []int
		err := fastSender(&waits).Send(context.Background(), Target{URL: url}, "published", []byte(`{}`))
		if err == nil {
			t.Fatalf("HTTP %d: want an error", status)
		}
		if n := len(rec.requests()); n != 1 || len(waits) != 0 {
			t.Errorf("HTTP %d: %d requests, %d waits; want 1, 0", status, n, len(waits))
		}
	}
}

func TestSendDoesNotFollowRedirects(t *testing.T) {
	target, targetURL := serve(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, targetURL, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	client := &http.Client{}
	s := &Sender{Client: client, Backoff: func(int) time.Duration { return 0 }}
	err := s.Send(context.Background(), Target{URL: redirect.URL, Secret: []byte("k")}, "", []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "redirects are not followed") {
		t.Errorf("error %v, want a redirect failure", err)
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
	if client.CheckRedirect != nil {
		t.Errorf("Send modified the caller's client")
	}
}

func TestSendRetriesNetworkErrorsWithoutLeakingTheURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/hooks/T0KEN-in-path?sig=T0KEN-in-query"
	srv.Close() // nothing listens there any more: connection refused
	var waits []int
	err := fastSender(&waits).Send(context.Background(), Target{URL: url, Secret: []byte("the-secret")}, "", []byte(`{}`))
	var ne *Error
	if !errors.As(err, &ne) || ne.Attempts != 3 || ne.StatusCode != 0 {
		t.Fatalf("error %#v, want *Error after 3 attempts", err)
	}
	if len(waits) != 2 {
		t.Errorf("waits %v, want 2", waits)
	}
	msg := err.Error()
	if strings.Contains(msg, "T0KEN") || strings.Contains(msg, "the-secret") {
		t.Errorf("message leaks the URL's path, query or the secret: %q", msg)
	}
	if !strings.Contains(msg, srv.URL) {
		t.Errorf("message %q should name the host %s", msg, srv.URL)
	}
}

func TestSendTimeoutPerAttempt(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	s := &Sender{Client: &http.Client{}, Timeout: 20 * time.Millisecond, Attempts: 2, Backoff: func(int) time.Duration { return 0 }}
	err := s.Send(context.Background(), Target{URL: srv.URL}, "", []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "no response within 20ms") {
		t.Fatalf("error %v, want a timeout", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 2 {
		t.Errorf("%d attempts reached the server, want 2 (timeouts are retried)", hits)
	}
}

func TestSendStopsWhenContextIsDone(t *testing.T) {
	rec, url := serve(t, 500)
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sender{Client: &http.Client{}, Backoff: func(int) time.Duration { cancel(); return time.Hour }}
	err := s.Send(ctx, Target{URL: url}, "", []byte(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if n := len(rec.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestSendRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/y", "/relative", "http://"} {
		if err := fastSender(nil).Send(context.Background(), Target{URL: u}, "", nil); err == nil {
			t.Errorf("URL %q: want an error", u)
		}
	}
}

func TestDefaultBackoff(t *testing.T) {
	if DefaultBackoff(1) != time.Second || DefaultBackoff(2) != 2*time.Second || DefaultBackoff(100) != 64*time.Second {
		t.Errorf("DefaultBackoff: %v %v %v", DefaultBackoff(1), DefaultBackoff(2), DefaultBackoff(100))
	}
}
