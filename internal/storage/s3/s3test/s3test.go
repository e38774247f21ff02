// Package s3test runs gofakes3, an in-memory S3 server, on 127.0.0.1 for
// fast tests of the code above the s3 adapter and of the CLI, describes the
// versitygw and SeaweedFS servers of scripts/test-servers, and opens stores
// on any of them.
// (The s3 adapter's own tests cannot use it: it imports the adapter.)
package s3test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// Server is an S3 endpoint with a bucket for the tests.
type Server struct {
	URL    string // the endpoint: http://host:port, or https:// (see TLS)
	Addr   string // host:port
	Bucket string
	Region string
	// Env holds the credentials, as the environment variables
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
	Env map[string]string
	// Transport trusts the server's certificate (nil for plain HTTP).
	Transport http.RoundTripper
}

// Getenv reads Env, for s3.Options.Getenv.
func (srv *Server) Getenv(k string) string { return srv.Env[k] }

// Option configures Start.
type Option func(*config)

type config struct {
	tls        bool
	middleware func(http.Handler) http.Handler
}

// TLS serves HTTPS, with a certificate that Server.Transport trusts.
func TLS() Option {
	return func(c *config) { c.tls = true }
}

// Middleware puts m in front of gofakes3: the handler m returns sees every
// request first, and may change it, answer it or watch its answer.
func Middleware(m func(http.Handler) http.Handler) Option {
	return func(c *config) { c.middleware = m }
}

// Start starts gofakes3 (memory backend) with the bucket "reports", region
// us-east-1, over plain HTTP unless TLS is given. It accepts any
// credentials; Env holds fake ones. It stops when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	mem := s3mem.New()
	if err := mem.CreateBucket("reports"); err != nil {
		t.Fatal(err)
	}
	var h http.Handler = gofakes3.New(mem, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()
	if cfg.middleware != nil {
		h = cfg.middleware(h)
	}
	var srv *httptest.Server
	if cfg.tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	s := &Server{URL: srv.URL, Addr: srv.Listener.Addr().String(), Bucket: "reports", Region: "us-east-1",
		Env: map[string]string{"AWS_ACCESS_KEY_ID": "fake-id", "AWS_SECRET_ACCESS_KEY": "fake-secret"}}
	if cfg.tls {
		s.Transport = srv.Client().Transport
	}
	return s
}

// Versitygw describes the versitygw server of scripts/test-servers
// (DISTRIBUTOR_TEST_S3_*, and its credentials in AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY), whose bucket tests share: give each its own
// prefix. It skips the test (fails it under CI=true) when that server is
// not configured.
func Versitygw(t testing.TB) *Server {
	t.Helper()
	env := storagetest.ServerEnv(t, "S3", "DISTRIBUTOR_TEST_S3_ENDPOINT", "DISTRIBUTOR_TEST_S3_BUCKET",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
	u, err := url.Parse(env[0])
	if err != nil || u.Host == "" {
		t.Fatalf("DISTRIBUTOR_TEST_S3_ENDPOINT %q: want http://host:port (%v)", env[0], err)
	}
	region := os.Getenv("DISTRIBUTOR_TEST_S3_REGION")
	if region == "" {
		region = "us-east-1"
	}
	return &Server{URL: env[0], Addr: u.Host, Bucket: env[1], Region: region,
		Env: map[string]string{"AWS_ACCESS_KEY_ID": env[2], "AWS_SECRET_ACCESS_KEY": env[3]}}
}

// Weed describes the SeaweedFS S3 gateway of scripts/test-servers
// (DISTRIBUTOR_TEST_WEED_*, with the credentials of versitygw in
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), whose bucket tests share:
// give each its own prefix. It skips the test (fails it under CI=true) when
// that server is not configured.
func Weed(t testing.TB) *Server {
	t.Helper()
	env := storagetest.ServerEnv(t, "SeaweedFS S3", "DISTRIBUTOR_TEST_WEED_ENDPOINT", "DISTRIBUTOR_TEST_WEED_BUCKET",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
	u, err := url.Parse(env[0])
	if err != nil || u.Host == "" {
		t.Fatalf("DISTRIBUTOR_TEST_WEED_ENDPOINT %q: want http://host:port (%v)", env[0], err)
	}
	region := os.Getenv("DISTRIBUTOR_TEST_WEED_REGION")
	if region == "" {
		region = "us-east-1"
	}
	return &Server{URL: env[0], Addr: u.Host, Bucket: env[1], Region: region,
		Env: map[string]string{"AWS_ACCESS_KEY_ID": env[2], "AWS_SECRET_ACCESS_KEY": env[3]}}
}

// Options returns the adapter's Options for the root prefix ("" for the
// bucket's root) on the server.
func (srv *Server) Options(prefix string) s3.Options {
	return s3.Options{Bucket: srv.Bucket, Prefix: prefix, Region: srv.Region, Endpoint: srv.URL, PathStyle: true,
		Getenv: srv.Getenv, Transport: srv.Transport}
}

// Open opens a store on the root prefix. When the test ends it deletes
// every object below the prefix and closes the store.
func (srv *Server) Open(t testing.TB, prefix string) *s3.Store {
	t.Helper()
	st, err := s3.New(context.Background(), srv.Options(prefix))
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

// DropHeaders is a Middleware that removes the named headers from every
// request, as some S3 gateways silently do with the conditional-write
// headers (If-None-Match, If-Match).
func DropHeaders(names ...string) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for _, name := range names {
				r.Header.Del(name)
			}
			h.ServeHTTP(w, r)
		})
	}
}
