package retry

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
)

// netOptions are the retry Options of the network tests: short real waits,
// a budget that a dropped connection needs a small part of.
func netOptions(t *testing.T, log *retryLog) Options {
	return Options{
		Attempts: 5,
		Base:     5 * time.Millisecond,
		Max:      50 * time.Millisecond,
		Budget:   2 * time.Second,
		OnRetry: func(op, path string, attempt int, err error) {
			t.Logf("retry %s %q after attempt %d: %v", op, path, attempt, err)
			log.onRetry(op, path, attempt, err)
		},
	}
}

// refuseOptions let a call retry against a refusing server until a small
// budget is spent.
var refuseOptions = Options{
	Attempts: 1000,
	Base:     20 * time.Millisecond,
	Max:      80 * time.Millisecond,
	Budget:   200 * time.Millisecond,
	Rand:     func() float64 { return 0.5 },
}

// knownHostsFor writes a known_hosts file listing key for addr.
func knownHostsFor(t *testing.T, key ssh.PublicKey, addr string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(addr)}, key)
	if err := os.WriteFile(file, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// sftpOptions returns Options for the root of srv reached at addr (the
// server or a proxy in front of it).
func sftpOptions(t *testing.T, srv *sftptest.Server, addr string) sftp.Options {
	t.Helper()
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portText)
	return sftp.Options{
		Host: host, Port: port, User: "tester",
		IdentityFile: srv.ClientKey, KnownHostsFile: knownHostsFor(t, srv.HostKey, addr),
		Root:        srv.Root,
		DialTimeout: 2 * time.Second, KeepaliveInterval: time.Second, KeepaliveTimeout: 2 * time.Second,
	}
}

// sftpViaProxy starts an SFTP server and a proxy in front of it, and
// opens a store through the proxy.
func sftpViaProxy(t *testing.T) (*sftp.Store, *faultproxy.Proxy) {
	t.Helper()
	srv := sftptest.Start(t)
	p := faultproxy.New(t, srv.Addr)
	st, err := sftp.New(t.Context(), sftpOptions(t, srv, p.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, p
}

// s3Rule scripts the answer to one request of the S3 server.
type s3Rule struct {
	method string // the request's method; "" matches any
	status int    // answer with this S3 error ...
	code   string // ... and code
	// lose serves the request, then drops the connection without the
	// answer: the request took effect, the client never learns it.
	lose bool
	// truncate sends the answer's headers and half of its body, then
	// drops the connection.
	truncate bool
}

// s3Server is an in-process gofakes3 server (memory backend, TLS) with a
// bucket "bucket", which answers requests as scripted.
type s3Server struct {
	*httptest.Server
	h     http.Handler
	mu    sync.Mutex
	rules []s3Rule
	log   []string // "METHOD /path" of every request
}

// requests returns the requests since the last call, as "METHOD /path".
func (s *s3Server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	log := s.log
	s.log = nil
	return log
}

func startS3(t *testing.T) *s3Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("bucket"); err != nil {
		t.Fatal(err)
	}
	srv := &s3Server{h: gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()}
	// TLS: minio-go then sends plain payloads (see the s3 package's tests).
	srv.Server = httptest.NewUnstartedServer(srv)
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // gofakes3's superfluous WriteHeader calls
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// script adds rules, applied in order to the requests they match.
func (s *s3Server) script(rules ...s3Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, rules...)
}

// rule logs a request and returns the rule that applies to it.
func (s *s3Server) rule(r *http.Request) (s3Rule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	method := r.Method
	s.log = append(s.log, method+" "+r.URL.Path)
	for i, r := range s.rules {
		if r.method == "" || r.method == method {
			s.rules = slices.Delete(s.rules, i, i+1)
			return r, true
		}
	}
	return s3Rule{}, false
}

func (s *s3Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rule, ok := s.rule(r)
	switch {
	case !ok:
		s.h.ServeHTTP(w, r)
	case rule.lose:
		s.h.ServeHTTP(httptest.NewRecorder(), r)
		panic(http.ErrAbortHandler) // closes the connection, unanswered
	case rule.truncate:
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		body := rec.Body.Bytes()
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	default:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(rule.status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+
			`<Error><Code>%s</Code><Message>injected by the test</Message><Resource>%s</Resource></Error>`, rule.code, r.URL.Path)
	}
}

// s3Options returns Options for the server reached at addr (the server or
// a proxy in front of it), with short timeouts and minio-go's own retries
// as given.
func (s *s3Server) options(addr string, maxAttempts int) s3.Options {
	u, _ := url.Parse(s.URL)
	u.Host = addr
	env := map[string]string{"AWS_ACCESS_KEY_ID": "fake-id", "AWS_SECRET_ACCESS_KEY": "fake-secret"}
	return s3.Options{
		Bucket: "bucket", Region: "us-east-1", Endpoint: u.String(), PathStyle: true,
		Transport: s.Client().Transport, Getenv: func(k string) string { return env[k] },
		DialTimeout: time.Second, ResponseTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second,
		MaxAttempts: maxAttempts,
	}
}

func openS3(t *testing.T, opts s3.Options) *s3.Store {
	t.Helper()
	st, err := s3.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// s3ViaProxy starts an S3 server and a proxy in front of it, and opens a
// store through the proxy.
func s3ViaProxy(t *testing.T, maxAttempts int) (*s3.Store, *faultproxy.Proxy, *s3Server) {
	t.Helper()
	srv := startS3(t)
	u, _ := url.Parse(srv.URL)
	p := faultproxy.New(t, u.Host)
	return openS3(t, srv.options(p.Addr(), maxAttempts)), p, srv
}

// cutReader is a seekable reader that calls cut once, the first time its
// position reaches after.
type cutReader struct {
	*bytes.Reader
	after int64
	cut   func()
	once  sync.Once
	done  atomic.Bool
}

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	if c.Size()-int64(c.Len()) >= c.after {
		c.once.Do(func() {
			c.cut()
			c.done.Store(true)
		})
	}
	return n, err
}

// payload returns n bytes of a pattern that depends on seed.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

// sequence runs a sequence of operations through s, whose connection goes
// through p: the connection drops (Cut) in the middle of an upload, and
// again between two calls. Every operation must succeed.
func sequence(t *testing.T, s *Store, p *faultproxy.Proxy) {
	ctx := t.Context()
	one, two := payload(256<<10, 1), payload(1<<20, 2)
	if _, err := s.Put(ctx, "a/one", bytes.NewReader(one), int64(len(one)), storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if data, _, err := s.Get(ctx, "a/one"); err != nil || !bytes.Equal(data, one) {
		t.Fatalf("Get(a/one): %d bytes, %v", len(data), err)
	}
	r := &cutReader{Reader: bytes.NewReader(two), after: 256 << 10, cut: p.Cut}
	// With its digest, as the engine's writes: S3 streams the body (without,
	// it would read it into memory first, before the cut).
	opts := storage.PutOptions{SHA256: fmt.Sprintf("sha256:%x", sha256.Sum256(two))}
	if err := storagetest.Bounded(t, "Put cut half-way", func() error { _, err := s.Put(ctx, "a/two", r, int64(len(two)), opts); return err }); err != nil {
		t.Fatal(err)
	}
	if !r.done.Load() {
		t.Fatal("the connection was not cut")
	}
	p.Cut()
	if info, err := s.Stat(ctx, "a/two"); err != nil || info.Size != int64(len(two)) {
		t.Fatalf("Stat(a/two) = %+v, %v", info, err)
	}
	if data, _, err := s.Get(ctx, "a/two"); err != nil || !bytes.Equal(data, two) {
		t.Fatalf("Get(a/two): %d bytes, %v", len(data), err)
	}
	var paths []string
	if err := s.List(ctx, "a/", func(info storage.Info) error {
		paths = append(paths, info.Path)
		return nil
	}); err != nil || !slices.Equal(paths, []string{"a/one", "a/two"}) {
		t.Fatalf("List = %q, %v", paths, err)
	}
	v1, err := storage.PutIf(ctx, s, "cat", []byte("catalog 1"), "")
	if err != nil {
		t.Fatal(err)
	}
	v2, err := storage.PutIf(ctx, s, "cat", []byte("catalog 2"), v1)
	if err != nil {
		t.Fatal(err)
	}
	if data, v, err := s.Get(ctx, "cat"); err != nil || string(data) != "catalog 2" || v != v2 {
		t.Fatalf("Get(cat) = %q, %q, %v; want version %q", data, v, err, v2)
	}
	if _, err := s.Put(ctx, "a/three", bytes.NewReader(one), int64(len(one)), storage.PutOptions{Mode: storage.PutCreate}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "a/three", bytes.NewReader(two), int64(len(two)), storage.PutOptions{Mode: storage.PutCreate}); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutNew over an object: %v", err)
	}
	rc, err := s.Open(ctx, "a/one")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(data, one) {
		t.Fatalf("Open(a/one): %d bytes, %v", len(data), err)
	}
	if err := s.Delete(ctx, "a/one"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "a/one"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("Stat after Delete: %v", err)
	}
	if _, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestCutHeals: a connection dropped in the middle of a sequence of
// operations costs a retry, and the sequence succeeds.
func TestCutHeals(t *testing.T) {
	check := func(t *testing.T, s *Store, log *retryLog) {
		t.Helper()
		if s.Retries() == 0 {
			t.Error("Retries() = 0")
		}
		if !slices.Contains(log.list(), "put a/two #1") {
			t.Errorf("retries %q; want the cut Put's", log.list())
		}
		t.Logf("%d retries, %v waited", s.Retries(), s.Waited())
	}
	t.Run("sftp", func(t *testing.T) {
		st, p := sftpViaProxy(t)
		log := &retryLog{}
		s := New(st, netOptions(t, log))
		sequence(t, s, p)
		check(t, s, log)
	})
	t.Run("s3", func(t *testing.T) {
		st, p, _ := s3ViaProxy(t, 0) // minio-go's default retries
		log := &retryLog{}
		s := New(st, netOptions(t, log))
		sequence(t, s, p)
		check(t, s, log)
	})
}

// refused checks that calls against a server that refuses connections for
// longer than the budget fail within a bound, retried until the budget is
// spent, then at once; and that the store works again once the server
// accepts connections.
func refused(t *testing.T, st storage.Store, p *faultproxy.Proxy) {
	ctx := t.Context()
	if _, err := st.Put(ctx, "x", bytes.NewReader([]byte("x")), 1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	s := New(st, refuseOptions)
	p.Refuse(true)
	p.Cut()
	err := storagetest.Bounded(t, "Stat while refused", func() error {
		_, err := s.Stat(ctx, "x")
		return err
	})
	if err == nil {
		t.Fatal("Stat succeeded through a refusing proxy")
	}
	if !s.IsTransient(err) {
		t.Errorf("the failure %v is not transient", err)
	}
	if s.Retries() == 0 || s.Waited() != refuseOptions.Budget {
		t.Errorf("%d retries, %v waited; want the budget, %v, spent", s.Retries(), s.Waited(), refuseOptions.Budget)
	}
	n := s.Retries()
	if err := storagetest.Bounded(t, "Get with the budget spent", func() error {
		_, _, err := s.Get(ctx, "x")
		return err
	}); err == nil || s.Retries() != n {
		t.Errorf("Get: %v after %d more retries", err, s.Retries()-n)
	}
	p.Refuse(false)
	if data, _, err := s.Get(ctx, "x"); err != nil || string(data) != "x" {
		t.Errorf("Get after the refusal = %q, %v", data, err)
	}
}

// TestRefuseFailsWithinBound: a server that refuses connections for longer
// than the budget makes calls fail within a bound.
func TestRefuseFailsWithinBound(t *testing.T) {
	t.Run("sftp", func(t *testing.T) {
		st, p := sftpViaProxy(t)
		refused(t, st, p)
	})
	t.Run("s3", func(t *testing.T) {
		st, p, _ := s3ViaProxy(t, 1) // no minio-go retries: each costs up to 1s
		refused(t, st, p)
	})
}

// TestSFTPErrors classifies the real errors of the sftp adapter.
func TestSFTPErrors(t *testing.T) {
	ctx := t.Context()
	st, p := sftpViaProxy(t)
	if _, err := st.Put(ctx, "f", bytes.NewReader([]byte("f")), 1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	_, errMissing := st.Stat(ctx, "missing")
	_, errBelowFile := storage.PutIf(ctx, st, "f/x", []byte("x"), "")
	_, errInvalid := st.Stat(ctx, "../x")
	big := payload(1<<20, 3)
	r := &cutReader{Reader: bytes.NewReader(big), after: 128 << 10, cut: p.Cut}
	_, errCut := st.Put(ctx, "big", r, int64(len(big)), storage.PutOptions{})
	p.Refuse(true)
	p.Cut()
	_, errRefused := st.Stat(ctx, "f")

	srv := sftptest.Start(t)
	opts := sftpOptions(t, srv, srv.Addr)
	other, _ := sftptest.NewKey(t, "", "")
	opts.KnownHostsFile = knownHostsFor(t, other.PublicKey(), srv.Addr)
	_, errHostKey := sftp.New(ctx, opts)

	st.Close()
	_, errClosed := st.Stat(ctx, "f")

	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection cut mid-upload", errCut, true},
		{"connection refused", errRefused, true},
		{"missing", errMissing, false},
		{"below a file", errBelowFile, false},
		{"invalid path", errInvalid, false},
		{"host key", errHostKey, false},
		{"closed store", errClosed, false},
	} {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if got := st.IsTransient(c.err); got != c.want {
			t.Errorf("%s: IsTransient(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// switchProxy forwards every connection to its current target (on the
// loopback interface), which set changes.
type switchProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	target string
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newSwitchProxy(t *testing.T, target string) *switchProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &switchProxy{ln: ln, target: target}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			p.wg.Go(func() { io.Copy(s, c); s.Close(); c.Close() })
			p.wg.Go(func() { io.Copy(c, s); s.Close(); c.Close() })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.closeConns()
		p.wg.Wait()
	})
	return p
}

func (p *switchProxy) closeConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// set sends new connections to target and drops the current ones.
func (p *switchProxy) set(target string) {
	p.mu.Lock()
	p.target = target
	p.mu.Unlock()
	p.closeConns()
}

// TestHostKeyChangeNotRetried: when the store reconnects to a server with
// another host key, the *sftp.HostKeyError is final.
func TestHostKeyChangeNotRetried(t *testing.T) {
	ctx := t.Context()
	a, b := sftptest.Start(t), sftptest.Start(t)
	sw := newSwitchProxy(t, a.Addr)
	st, err := sftp.New(ctx, sftpOptions(t, a, sw.ln.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var hostKeyRetried atomic.Bool
	opts := refuseOptions
	opts.OnRetry = func(op, path string, attempt int, err error) {
		if _, ok := errors.AsType[*sftp.HostKeyError](err); ok {
			hostKeyRetried.Store(true)
		}
	}
	s := New(st, opts)
	if _, err := s.Put(ctx, "x", bytes.NewReader([]byte("x")), 1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	sw.set(b.Addr)
	err = storagetest.Bounded(t, "Stat on a server with another host key", func() error {
		_, err := s.Stat(ctx, "x")
		return err
	})
	if _, ok := errors.AsType[*sftp.HostKeyError](err); !ok {
		t.Fatalf("Stat: %v, want a *sftp.HostKeyError", err)
	}
	if hostKeyRetried.Load() {
		t.Error("a HostKeyError was retried")
	}
}

// TestS3Errors classifies the real errors of the s3 adapter, and retries
// the transient ones.
func TestS3Errors(t *testing.T) {
	ctx := t.Context()
	srv := startS3(t)
	st := openS3(t, srv.options(srv.Listener.Addr().String(), 1)) // no minio-go retries
	if _, err := st.Put(ctx, "f", bytes.NewReader([]byte("f")), 1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, code string
		status       int
		want         bool
	}{
		{"GET", "SlowDown", 503, true},
		{"HEAD", "SlowDown", 503, true},
		{"GET", "InternalError", 500, true},
		{"HEAD", "InternalError", 500, true},
		{"GET", "BadGateway", 502, true},
		{"GET", "RequestTimeout", 400, true},
		{"GET", "NotImplemented", 501, false},
		{"GET", "AccessDenied", 403, false},
		{"HEAD", "AccessDenied", 403, false},
		{"GET", "InvalidArgument", 400, false},
		{"GET", "NoSuchKey", 404, false},
	} {
		srv.script(s3Rule{method: c.method, status: c.status, code: c.code})
		var err error
		if c.method == "GET" {
			_, _, err = st.Get(ctx, "f")
		} else {
			_, err = st.Stat(ctx, "f")
		}
		if err == nil {
			t.Errorf("%s %d %s: no error", c.method, c.status, c.code)
			continue
		}
		if got := st.IsTransient(err); got != c.want {
			t.Errorf("%s %d %s: IsTransient(%v) = %v, want %v", c.method, c.status, c.code, err, got, c.want)
		}
	}
	srv.script(s3Rule{method: "GET", truncate: true})
	if _, _, err := st.Get(ctx, "f"); err == nil || !st.IsTransient(err) {
		t.Errorf("truncated GET: IsTransient(%v) = false", err)
	}
	if _, _, err := st.Get(ctx, "missing"); !errors.Is(err, storage.ErrNotExist) || st.IsTransient(err) {
		t.Errorf("missing: %v", err)
	}

	s := New(st, netOptions(t, &retryLog{}))
	srv.script(s3Rule{method: "GET", status: 503, code: "SlowDown"}, s3Rule{method: "GET", truncate: true})
	if data, _, err := s.Get(ctx, "f"); err != nil || string(data) != "f" || s.Retries() != 2 {
		t.Errorf("Get through 503 and a truncated answer = %q, %v after %d retries", data, err, s.Retries())
	}
	srv.script(s3Rule{method: "HEAD", status: 501, code: "NotImplemented"})
	if _, err := s.Stat(ctx, "f"); err == nil || s.Retries() != 2 {
		t.Errorf("Stat after a 501: %v after %d retries", err, s.Retries()-2)
	}
}

// TestS3LostAnswers: writes whose request took effect but whose answer
// was lost (the server dropped the connection after serving them)
// succeed: Put and PutIf by reading back, PutNew by reading back after the
// retry meets the object it wrote.
func TestS3LostAnswers(t *testing.T) {
	ctx := t.Context()
	srv := startS3(t)
	st := openS3(t, srv.options(srv.Listener.Addr().String(), 0))
	log := &retryLog{}
	s := New(st, netOptions(t, log))
	lose := s3Rule{method: "PUT", lose: true}

	// requests checks the requests since the last check.
	requests := func(what string, want ...string) {
		t.Helper()
		if got := srv.requests(); !slices.Equal(got, want) {
			t.Errorf("%s: requests %q, want %q", what, got, want)
		}
	}
	srv.requests()

	srv.script(lose)
	v1, err := storage.PutIf(ctx, s, "cat", []byte("catalog 1"), "")
	if err != nil {
		t.Fatalf("PutIf(absent): %v", err)
	}
	// Not sent again: the read-back found it.
	requests("PutIf(absent)", "PUT /bucket/cat", "GET /bucket/cat")
	srv.script(lose)
	v2, err := storage.PutIf(ctx, s, "cat", []byte("catalog 2"), v1)
	if err != nil {
		t.Fatalf("PutIf(%s): %v", v1, err)
	}
	if data, v, err := st.Get(ctx, "cat"); err != nil || string(data) != "catalog 2" || v != v2 {
		t.Errorf("Get(cat) = %q, %q, %v; want version %q", data, v, err, v2)
	}
	// Another writer's change is a precondition failure, not a success.
	if _, err := storage.PutIf(ctx, st, "cat", []byte("theirs"), v2); err != nil {
		t.Fatal(err)
	}
	srv.requests()
	srv.script(s3Rule{method: "PUT", status: 503, code: "SlowDown"})
	if _, err := storage.PutIf(ctx, s, "cat", []byte("mine"), v2); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf after another writer: %v, want ErrPrecondition", err)
	}
	requests("PutIf after another writer", "PUT /bucket/cat", "GET /bucket/cat")

	big := payload(256<<10, 4)
	srv.script(lose)
	if _, err := s.Put(ctx, "new", bytes.NewReader(big), int64(len(big)), storage.PutOptions{Mode: storage.PutCreate}); err != nil {
		t.Fatalf("PutNew: %v", err)
	}
	// The second PUT meets the first one's object (412): read back.
	requests("PutNew", "PUT /bucket/new", "PUT /bucket/new", "GET /bucket/new")
	srv.script(lose)
	if _, err := s.Put(ctx, "put", bytes.NewReader(big), int64(len(big)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	for _, p := range []string{"new", "put"} {
		if data, _, err := st.Get(ctx, p); err != nil || !bytes.Equal(data, big) {
			t.Errorf("Get(%s): %d bytes, %v", p, len(data), err)
		}
	}
	t.Logf("retries: %q", log.list())
	if s.Retries() < 5 {
		t.Errorf("Retries() = %d, want at least 5", s.Retries())
	}
}
