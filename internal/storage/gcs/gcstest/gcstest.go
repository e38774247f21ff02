// Package gcstest describes the fake-gcs-server of scripts/test-servers
// (scripts/servers/fake-gcs.sh), opens gcs stores on it, and puts a
// gateway that drops conditions in front of it, for the tests of the gcs
// adapter and of the code above it.
package gcstest

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/gcs"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// Server is a GCS JSON API endpoint with a bucket for the tests, which
// they share: give each its own prefix (Prefix).
type Server struct {
	Endpoint string // the JSON API's base URL, http://127.0.0.1:PORT/storage/v1/
	Bucket   string
}

// FakeGCS describes the fake-gcs-server of scripts/test-servers
// (DISTRIBUTOR_TEST_GCS_ENDPOINT and _BUCKET). It skips the test (fails it
// under CI=true) when that server is not configured.
func FakeGCS(t testing.TB) *Server {
	t.Helper()
	env := storagetest.ServerEnv(t, "GCS", "DISTRIBUTOR_TEST_GCS_ENDPOINT", "DISTRIBUTOR_TEST_GCS_BUCKET")
	if u, err := url.Parse(env[0]); err != nil || u.Host == "" {
		t.Fatalf("DISTRIBUTOR_TEST_GCS_ENDPOINT %q: want http://host:port/storage/v1/ (%v)", env[0], err)
	}
	return &Server{Endpoint: env[0], Bucket: env[1]}
}

// Prefix returns a root prefix of the test's own, below "test/".
func Prefix(t testing.TB) string {
	return "test/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + rand.Text()[:8]
}

// Options returns the adapter's Options for the root prefix ("" for the
// bucket's root): anonymous, as the emulator wants.
func (srv *Server) Options(prefix string) gcs.Options {
	return gcs.Options{Bucket: srv.Bucket, Prefix: prefix, Endpoint: srv.Endpoint, Anonymous: true}
}

// Open opens a store with opts. When the test ends it deletes every
// object below the root and closes the store.
func Open(t testing.TB, opts gcs.Options) *gcs.Store {
	t.Helper()
	st, err := gcs.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var keys []string
		st.List(context.Background(), "", func(i storage.Info) error {
			keys = append(keys, i.Path)
			return nil
		})
		for _, k := range keys {
			st.Delete(context.Background(), k)
		}
		st.Close()
	})
	return st
}

// Open opens a store on the root prefix of the server's bucket (see the
// function Open).
func (srv *Server) Open(t testing.TB, prefix string) *gcs.Store {
	t.Helper()
	return Open(t, srv.Options(prefix))
}

// NewBucket creates a bucket of the test's own on the emulator and
// returns the Server of it (for tests of a bucket's root). It is left
// behind: the emulator keeps it in memory.
func (srv *Server) NewBucket(t testing.TB) *Server {
	t.Helper()
	name := "t-" + strings.ToLower(rand.Text()[:12])
	u, err := url.JoinPath(srv.Endpoint, "b")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(u+"?project=distributor-test", "application/json", strings.NewReader(`{"name":"`+name+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create bucket %s: %s", name, resp.Status)
	}
	return &Server{Endpoint: srv.Endpoint, Bucket: name}
}

// DropConditions starts, until the test ends, a gateway on 127.0.0.1 in
// front of the server that removes the ifGenerationMatch parameter from
// every request for which drop(value) holds, as a server that accepts
// conditional writes and ignores the condition would behave. It returns
// the gateway's Server.
func (srv *Server) DropConditions(t testing.TB, drop func(value string) bool) *Server {
	t.Helper()
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
		q := r.Out.URL.Query()
		if q.Has("ifGenerationMatch") && drop(q.Get("ifGenerationMatch")) {
			q.Del("ifGenerationMatch")
			r.Out.URL.RawQuery = q.Encode()
		}
	}}
	gw := httptest.NewServer(proxy)
	t.Cleanup(gw.Close)
	return &Server{Endpoint: gw.URL + target.Path, Bucket: srv.Bucket}
}
