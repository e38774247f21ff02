package gcs_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/deadline"
	"github.com/distributor-dev/distributor/internal/storage/gcs"
	"github.com/distributor-dev/distributor/internal/storage/gcs/gcstest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// testTimeout is the tests' dial, response and idle timeout.
var testTimeout = testtime.Scale(500 * time.Millisecond)

// proxiedTimeout is the deadlines of the stores of proxiedStores:
// fake-gcs-server reads, hashes and stores an upload whole before it
// answers, which takes it longer than testTimeout on a loaded machine.
var proxiedTimeout = testtime.Scale(2 * time.Second)

// proxiedStores opens a store on fake-gcs-server through a faultproxy of
// its own, with short deadlines, for the partition tests of storagetest.
func proxiedStores(t *testing.T, fn func(t *testing.T, s storage.Store, p storagetest.Partition)) {
	srv := gcstest.FakeGCS(t)
	u, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := faultproxy.New(t, u.Host)
	u.Host = p.Addr()
	opts := srv.Options(gcstest.Prefix(t))
	opts.Endpoint = u.String()
	opts.DialTimeout, opts.ResponseTimeout, opts.IdleTimeout = proxiedTimeout, proxiedTimeout, proxiedTimeout
	fn(t, gcstest.Open(t, opts), p)
}

// TestStalledPutFails: an upload whose connection stops carrying bytes
// half-way fails within about the idle timeout, stores nothing, and the
// store works again once the network heals.
func TestStalledPutFails(t *testing.T) {
	storagetest.StalledPut(t, proxiedStores, 8<<20)
}

// TestStalledReadsFail: Get and Stat whose server stops answering, and a
// download stalled half-way, fail within the bound.
func TestStalledReadsFail(t *testing.T) {
	storagetest.StalledReads(t, proxiedStores, 16<<20) // more than the socket buffers
}

// fakeServer serves handler as a GCS endpoint and returns a store on it
// with the tests' deadlines (anonymous, no check).
func fakeServer(t *testing.T, handler http.HandlerFunc) *gcs.Store {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	s, err := gcs.New(t.Context(), gcs.Options{Bucket: "b", Endpoint: srv.URL, Anonymous: true, SkipCheck: true,
		DialTimeout: testTimeout, ResponseTimeout: testTimeout, IdleTimeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// statusServer answers every request with status and a JSON API error.
func statusServer(t *testing.T, status int) *gcs.Store {
	return fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"code":%d,"message":"told to fail","errors":[{"reason":"test"}]}}`, status)
	})
}

// TestResponseTimeout: a server that takes the request and never answers
// fails the call after the response timeout.
func TestResponseTimeout(t *testing.T) {
	// The idle timeout is longer here: with both equal, the connection's
	// idle deadline can fire first while nothing moves.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	s, err := gcs.New(t.Context(), gcs.Options{Bucket: "b", Endpoint: srv.URL, Anonymous: true, SkipCheck: true,
		DialTimeout: testTimeout, ResponseTimeout: testTimeout, IdleTimeout: 4 * testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	err = storagetest.Bounded(t, "Stat", func() error { _, err := s.Stat(context.Background(), "x"); return err })
	if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") || !s.IsTransient(err) {
		t.Errorf("Stat of an object the server never answers: %v; want a transient response header timeout", err)
	}
}

// TestIdleTimeout: a download whose bytes stop coming fails after the
// idle timeout, with an error naming it.
func TestIdleTimeout(t *testing.T) {
	s := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1048576")
		w.Header().Set("X-Goog-Generation", "1")
		w.WriteHeader(http.StatusOK)
		w.Write(make([]byte, 1024))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	err := storagetest.Bounded(t, "Get", func() error { _, _, err := s.Get(context.Background(), "x"); return err })
	var se *deadline.StallError
	if !errors.As(err, &se) || !s.IsTransient(err) {
		t.Errorf("Get of a body that stops: %v; want a transient *deadline.StallError", err)
	}
}

// TestUploadSentOnce: a failed upload is not sent again by the client
// (retrying is the caller's decision), nor is any other request.
func TestUploadSentOnce(t *testing.T) {
	calls := 0
	s := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	if _, err := storage.PutIf(t.Context(), s, "x", []byte("x"), ""); err == nil || !s.IsTransient(err) {
		t.Fatalf("PutIf against a 503: %v, want a transient error", err)
	}
	if _, err := s.Stat(t.Context(), "x"); err == nil {
		t.Fatal("Stat against a 503 succeeded")
	}
	if calls != 2 {
		t.Fatalf("%d requests for two calls", calls)
	}
}
