package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/deadline"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// testTimeout is the tests' dial, response and idle timeout.
var testTimeout = testtime.Scale(500 * time.Millisecond)

// withTestDeadlines sets the tests' short timeouts.
func withTestDeadlines(opts Options) Options {
	opts.DialTimeout = testTimeout
	opts.ResponseTimeout = testTimeout
	opts.IdleTimeout = testTimeout
	return opts
}

// viaProxy puts a faultproxy in front of the server of opts (an endpoint
// on the loopback interface) and returns Options that reach it through
// the proxy, with the tests' deadlines.
func viaProxy(t *testing.T, opts Options) (Options, *faultproxy.Proxy) {
	t.Helper()
	u, err := url.Parse(opts.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := faultproxy.New(t, u.Host)
	u.Host = p.Addr()
	opts.Endpoint = u.String()
	return withTestDeadlines(opts), p
}

// proxiedServers runs fn against gofakes3 and versitygw, each behind a
// proxy of its own.
func proxiedServers(t *testing.T, fn func(t *testing.T, opts Options, p *faultproxy.Proxy)) {
	servers(t, func(t *testing.T, opts Options) {
		opts, p := viaProxy(t, opts)
		fn(t, opts, p)
	})
}

// proxiedStores opens a store on each of proxiedServers, for the
// partition tests of storagetest.
func proxiedStores(t *testing.T, fn func(t *testing.T, s storage.Store, p storagetest.Partition)) {
	proxiedServers(t, func(t *testing.T, opts Options, p *faultproxy.Proxy) { fn(t, open(t, opts), p) })
}

// TestStalledPutFails: a Put whose connection stops carrying bytes
// half-way (a partition: the TCP connection stays open, nothing flows)
// fails within about the idle timeout instead of hanging, stores nothing,
// and once the network heals the same Store works again.
func TestStalledPutFails(t *testing.T) {
	storagetest.StalledPut(t, proxiedStores, 8<<20)
}

// TestStalledReadsFail: Get and Stat whose server stops answering, and a
// streaming read stalled half-way through the transfer, fail within the
// bound (minio-go's few retries included), and the Store works again after
// the heal.
func TestStalledReadsFail(t *testing.T) {
	// Larger than the socket buffers, so that a stall half-way through
	// leaves most of it on the server's side.
	const size = 32 << 20
	storagetest.StalledReads(t, proxiedStores, size)
}

// TestRefusedFailsFast: a server that refuses connections fails a call
// after at most MaxAttempts connection attempts, within about a second of
// backoff, not after minio-go's default ten attempts; once it accepts
// again the same Store works.
func TestRefusedFailsFast(t *testing.T) {
	proxiedServers(t, func(t *testing.T, opts Options, p *faultproxy.Proxy) {
		for _, attempts := range []int{0, 1} {
			want := attempts
			if want == 0 {
				want = objstore.DefaultMaxAttempts
			}
			o := opts
			o.MaxAttempts = attempts

			// New has no pooled connection: every attempt is one
			// connection the proxy refuses.
			p.Refuse(true)
			before := p.Accepted()
			err := storagetest.Bounded(t, "New", func() error { _, err := New(context.Background(), o); return err })
			if err == nil {
				t.Fatal("New through a refusing proxy succeeded")
			}
			if n := p.Accepted() - before; n < 1 || n > want {
				t.Errorf("MaxAttempts %d: New made %d connection attempts, want 1 to %d", attempts, n, want)
			}
			p.Refuse(false)

			// A Store whose server goes away: its pooled connections are
			// cut, new ones refused. (The HTTP transport itself may retry
			// once on a fresh connection when it finds a pooled one
			// closed.)
			s := open(t, o)
			put(t, s, "x", "x")
			p.Refuse(true)
			p.Cut()
			before = p.Accepted()
			if err := storagetest.Bounded(t, "Stat", func() error { _, err := s.Stat(context.Background(), "x"); return err }); err == nil {
				t.Fatal("Stat through a refusing proxy succeeded")
			}
			if n := p.Accepted() - before; n > want+1 {
				t.Errorf("MaxAttempts %d: Stat made %d connection attempts, want at most %d", attempts, n, want+1)
			}
			p.Refuse(false)
			if data, _, err := s.Get(t.Context(), "x"); err != nil || string(data) != "x" {
				t.Fatalf("Get once the server accepts again: %q, %v", data, err)
			}
		}
	})
}

// slowServer is gofakes3 behind a handler that, for the key "slow-headers",
// never answers, and for "slow-body", sends the headers and the first KiB
// of a 1 MiB body, then nothing. Both wait until the client goes away.
func slowServer(t *testing.T) Options {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("bucket"); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/slow-headers"):
			<-r.Context().Done()
		case strings.HasSuffix(r.URL.Path, "/slow-body"):
			w.Header().Set("Content-Length", "1048576")
			w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef"`)
			w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusOK)
			w.Write(make([]byte, 1024))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			fake.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return Options{
		Bucket: "bucket", Region: "us-east-1", Endpoint: srv.URL, PathStyle: true, Transport: srv.Client().Transport,
		Getenv: testEnv(map[string]string{"AWS_ACCESS_KEY_ID": "fake-id", "AWS_SECRET_ACCESS_KEY": "fake-secret"}),
	}
}

// TestResponseTimeout: a server that takes the request and never answers
// fails the call after ResponseTimeout per attempt, even with a long idle
// timeout.
func TestResponseTimeout(t *testing.T) {
	opts := slowServer(t)
	opts.ResponseTimeout = 200 * time.Millisecond
	opts.IdleTimeout = time.Minute
	s := open(t, opts)
	err := storagetest.Bounded(t, "Stat", func() error { _, err := s.Stat(context.Background(), "slow-headers"); return err })
	if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
		t.Errorf("Stat of a key the server never answers: %v; want a response header timeout", err)
	}
	put(t, s, "fine", "fine") // the store still works
}

// TestIdleTimeout: a download whose bytes stop coming fails after
// IdleTimeout, even with a long response timeout, with an error naming the
// idle timeout.
func TestIdleTimeout(t *testing.T) {
	opts := slowServer(t)
	opts.ResponseTimeout = time.Minute
	opts.IdleTimeout = 200 * time.Millisecond
	s := open(t, opts)
	err := storagetest.Bounded(t, "Get", func() error { _, _, err := s.Get(context.Background(), "slow-body"); return err })
	var se *deadline.StallError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "idle timeout") {
		t.Errorf("Get of a body that stops: %v; want a *deadline.StallError", err)
	}
	put(t, s, "fine", "fine")
}

// TestHealthyTransferOutlastsIdleTimeout: the idle timeout bounds silence,
// not transfers: an upload and a download that take several idle timeouts
// each, with bytes moving all along, succeed.
func TestHealthyTransferOutlastsIdleTimeout(t *testing.T) {
	opts := withTestDeadlines(fakeS3(t))
	opts.IdleTimeout = 150 * time.Millisecond
	s := open(t, opts)
	// Bytes move every 20ms (the store's exact-size check holds the last
	// chunk back for one more read: 40ms).
	const size = 1 << 20
	body := &slowReader{r: bytes.NewReader(bytes.Repeat([]byte("x"), size)), chunk: 32 << 10, pause: 20 * time.Millisecond}
	start := time.Now()
	if _, err := s.Put(t.Context(), "slow", body, size, storage.PutOptions{}); err != nil {
		t.Fatalf("slow Put: %v", err)
	}
	t.Logf("Put of %d bytes took %v with an idle timeout of %v", size, time.Since(start).Round(time.Millisecond), opts.IdleTimeout)
	rc, err := s.Open(t.Context(), "slow")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	start = time.Now()
	r := &slowReader{r: rc, chunk: 32 << 10, pause: 20 * time.Millisecond}
	n := 0
	buf := make([]byte, 32<<10)
	for {
		m, err := r.Read(buf)
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("slow read after %d bytes: %v", n, err)
		}
	}
	if n != size {
		t.Fatalf("slow read: %d bytes, want %d", n, size)
	}
	t.Logf("read of %d bytes took %v", n, time.Since(start).Round(time.Millisecond))
}

// slowReader reads r in chunks of at most chunk bytes, pausing before each.
type slowReader struct {
	r     io.Reader
	chunk int
	pause time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.pause)
	return s.r.Read(p[:min(len(p), s.chunk)])
}
