package sftp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
)

// The keepalive settings of the tests: a stalled server is detected within
// about 500ms. hangBound is how long a call may take to fail before the
// test calls it hung: generous, so that the tests never depend on the
// machine's speed, yet far below what a missing deadline would take
// (forever).
const (
	testKeepaliveInterval = 200 * time.Millisecond
	testKeepaliveTimeout  = 300 * time.Millisecond
	testDialTimeout       = time.Second
	hangBound             = 10 * time.Second
)

// viaProxy puts a faultproxy in front of the server of opts and returns
// Options that reach it through the proxy, with the tests' short dial
// timeout and keepalive.
func viaProxy(t *testing.T, opts Options) (Options, *faultproxy.Proxy) {
	t.Helper()
	p := faultproxy.New(t, net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	opts.KnownHostsFile = knownHostsVia(t, opts.KnownHostsFile, p.Addr())
	opts.Host, opts.Port = "127.0.0.1", p.Port()
	opts.DialTimeout = testDialTimeout
	opts.KeepaliveInterval = testKeepaliveInterval
	opts.KeepaliveTimeout = testKeepaliveTimeout
	return opts, p
}

// knownHostsVia writes a known_hosts file that lists the host keys of the
// file base for the address addr (known_hosts names host and port, so a
// proxy in front of a server needs its own entry).
func knownHostsVia(t *testing.T, base, addr string) string {
	t.Helper()
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rest := data; len(rest) > 0; {
		marker, _, key, _, next, err := ssh.ParseKnownHosts(rest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		rest = next
		if marker == "" {
			lines = append(lines, knownhosts.Line([]string{knownhosts.Normalize(addr)}, key))
		}
	}
	if len(lines) == 0 {
		t.Fatalf("%s lists no host key", base)
	}
	file := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// bounded runs fn and returns its error, failing the test if fn has not
// returned within hangBound. It logs how long fn took.
func bounded(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- fn() }()
	select {
	case err := <-done:
		t.Logf("%s returned after %v: %v", what, time.Since(start).Round(time.Millisecond), err)
		return err
	case <-time.After(hangBound):
		t.Fatalf("%s still blocked %v after the server stalled", what, hangBound)
		return nil
	}
}

// pausingReader yields the bytes of r; after the first n it blocks, once,
// until resume is closed, having closed paused.
type pausingReader struct {
	r      io.Reader
	n      int64
	paused chan struct{}
	resume chan struct{}
	once   sync.Once
}

func newPausingReader(r io.Reader, n int64) *pausingReader {
	return &pausingReader{r: r, n: n, paused: make(chan struct{}), resume: make(chan struct{})}
}

func (p *pausingReader) Read(b []byte) (int, error) {
	if p.n <= 0 {
		p.once.Do(func() {
			close(p.paused)
			<-p.resume
		})
		return p.r.Read(b)
	}
	if int64(len(b)) > p.n {
		b = b[:p.n]
	}
	n, err := p.r.Read(b)
	p.n -= int64(n)
	return n, err
}

// storeConn returns the store's current connection (nil if none).
func storeConn(s *Store) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// waitDead waits up to hangBound for c to be closed.
func waitDead(t *testing.T, c *conn) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-c.done:
		return time.Since(start)
	case <-time.After(hangBound):
		t.Fatalf("the connection is still open %v after the server stalled", hangBound)
		return 0
	}
}

// TestStalledPutFails: a Put whose server stops answering half-way (a
// network partition: the TCP connection stays open, no byte flows) fails
// within about the keepalive interval plus timeout (then the dial timeout
// of its cleanup's fresh connection) instead of hanging, and once the
// network heals the same Store works again.
func TestStalledPutFails(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		opts, p := viaProxy(t, opts)
		s := open(t, opts)
		put(t, s, "before", "before")
		const size = 16 << 20
		r := newPausingReader(bytes.NewReader(bytes.Repeat([]byte("0123456789abcdef"), size/16)), 1<<20)
		errc := make(chan error, 1)
		go func() { errc <- s.Put(context.Background(), "big", r, size) }()
		select {
		case <-r.paused: // 1 MiB went out; the rest follows into the stall
		case err := <-errc:
			t.Fatalf("Put ended before the stall: %v", err)
		}
		p.Stall()
		close(r.resume)
		err := bounded(t, "Put", func() error { return <-errc })
		if err == nil {
			t.Fatal("Put into a stalled server succeeded")
		}
		p.Heal()
		put(t, s, "after", "after")
		if data, _, err := s.Get(t.Context(), "before"); err != nil || string(data) != "before" {
			t.Fatalf("Get after the heal: %q, %v", data, err)
		}
		if _, err := s.Stat(t.Context(), "big"); err == nil {
			t.Error("the stalled Put left its target")
		}
	})
}

// TestStalledReadsFail: Get, Stat and a streaming read that the server
// stops answering (before the request, or half-way through the transfer)
// fail within the bound, and the Store works again after the heal.
func TestStalledReadsFail(t *testing.T) {
	const size = 8 << 20
	content := bytes.Repeat([]byte("abcdefghijklmnop"), size/16)
	for _, tc := range []struct {
		name string
		// run stalls the proxy at the right moment and returns the call
		// to bound.
		run func(t *testing.T, s *Store, p *faultproxy.Proxy) func() error
	}{
		{"Get", func(t *testing.T, s *Store, p *faultproxy.Proxy) func() error {
			p.Stall()
			return func() error { _, _, err := s.Get(context.Background(), "big"); return err }
		}},
		{"Stat", func(t *testing.T, s *Store, p *faultproxy.Proxy) func() error {
			p.Stall()
			return func() error { _, err := s.Stat(context.Background(), "big"); return err }
		}},
		{"Open mid-transfer", func(t *testing.T, s *Store, p *faultproxy.Proxy) func() error {
			rc, err := s.Open(context.Background(), "big")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rc.Close() })
			if _, err := io.ReadFull(rc, make([]byte, 64<<10)); err != nil {
				t.Fatal(err)
			}
			p.Stall()
			return func() error { _, err := io.Copy(io.Discard, rc); return err }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers(t, func(t *testing.T, opts Options) {
				opts, p := viaProxy(t, opts)
				s := open(t, opts)
				if err := s.Put(t.Context(), "big", bytes.NewReader(content), size); err != nil {
					t.Fatal(err)
				}
				if err := bounded(t, tc.name, tc.run(t, s, p)); err == nil {
					t.Fatalf("%s from a stalled server succeeded", tc.name)
				}
				p.Heal()
				data, _, err := s.Get(t.Context(), "big")
				if err != nil || !bytes.Equal(data, content) {
					t.Fatalf("Get after the heal: %d bytes, %v", len(data), err)
				}
			})
		})
	}
}

// TestKeepaliveClosesStalledIdleConnection: with no call in flight, the
// keepalive alone finds a partitioned server and closes the connection;
// the next call after the heal reconnects.
func TestKeepaliveClosesStalledIdleConnection(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		opts, p := viaProxy(t, opts)
		s := open(t, opts)
		put(t, s, "a", "1")
		c := storeConn(s)
		p.Stall()
		t.Logf("connection closed %v after the stall", waitDead(t, c).Round(time.Millisecond))
		p.Heal()
		if data, _, err := s.Get(t.Context(), "a"); err != nil || string(data) != "1" {
			t.Fatalf("Get after the heal: %q, %v", data, err)
		}
		if storeConn(s) == c {
			t.Error("the store kept the dead connection")
		}
	})
}

// TestKeepaliveKeepsHealthyConnection: a server that answers keepalives
// (the in-process server and OpenSSH both answer "not understood") keeps
// its connection however many keepalives go by.
func TestKeepaliveKeepsHealthyConnection(t *testing.T) {
	srv := newTestServer(t)
	opts := srv.options()
	opts.KeepaliveInterval = 10 * time.Millisecond
	opts.KeepaliveTimeout = testKeepaliveTimeout
	s := open(t, opts)
	c := storeConn(s)
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		put(t, s, "x", "x")
	}
	if c.dead.Load() || storeConn(s) != c {
		t.Error("the keepalive closed a healthy connection")
	}
	if n := srv.loginCount(); n != 1 {
		t.Errorf("%d logins, want 1", n)
	}
}

// TestDialTimeoutBoundsSilentServer: a server that accepts the TCP
// connection and then never speaks makes New fail once DialTimeout runs
// out, even with a context that never ends, with an error that says so.
func TestDialTimeoutBoundsSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // held open, silent
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range held {
			c.Close()
		}
	})
	srv := newTestServer(t)
	opts := srv.options()
	opts.Host, opts.Port = "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
	opts.DialTimeout = 300 * time.Millisecond
	err = bounded(t, "New", func() error {
		_, err := New(context.Background(), opts)
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "dial timeout") {
		t.Errorf("New against a silent server: %v; want a dial timeout matching context.DeadlineExceeded", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(held) != 1 {
		t.Errorf("%d connections reached the silent server, want 1", len(held))
	}
}

// TestStalledDialFails: a reconnect through a partition (the proxy
// accepts, nothing flows) fails within the dial timeout.
func TestStalledDialFails(t *testing.T) {
	opts, p := viaProxy(t, newTestServer(t).options())
	p.Stall()
	err := bounded(t, "New", func() error {
		_, err := New(context.Background(), opts)
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("New through a stall: %v; want a dial timeout", err)
	}
}

// mutedServer is an SSH server that serves SFTP but never answers global
// requests (keepalives): a server process that is alive at the TCP level
// but stuck, or a slow link whose answer is held back.
type mutedServer struct {
	opts  Options // for a client of the server, with the tests' keepalive
	mu    sync.Mutex
	conns []net.Conn
}

func startMutedServer(t *testing.T) *mutedServer {
	t.Helper()
	dir := t.TempDir()
	hostKey, _ := newKey(t, "", "")
	client, clientKey := newKey(t, dir, "client")
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if !bytes.Equal(key.Marshal(), client.PublicKey().Marshal()) {
				return nil, errors.New("unknown key")
			}
			return nil, nil
		},
	}
	cfg.AddHostKey(hostKey)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(ln.Addr().String())}, hostKey.PublicKey())
	if err := os.WriteFile(known, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := &mutedServer{opts: Options{
		Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, User: "tester",
		IdentityFile: clientKey, KnownHostsFile: known, Root: filepath.Join(dir, "root"),
		KeepaliveInterval: testKeepaliveInterval, KeepaliveTimeout: testKeepaliveTimeout,
	}}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			m.mu.Lock()
			m.conns = append(m.conns, nc)
			m.mu.Unlock()
			wg.Go(func() { m.serve(nc, cfg) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		m.mu.Lock()
		for _, c := range m.conns {
			c.Close()
		}
		m.mu.Unlock()
		wg.Wait()
	})
	return m
}

func (m *mutedServer) serve(nc net.Conn, cfg *ssh.ServerConfig) {
	defer nc.Close()
	_, chans, reqs, err := ssh.NewServerConn(nc, cfg)
	if err != nil {
		return
	}
	go func() {
		for range reqs { // never answered
		}
	}()
	for nch := range chans {
		ch, chReqs, err := nch.Accept()
		if err != nil {
			return
		}
		go func() {
			for req := range chReqs {
				ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
				req.Reply(ok, nil)
				if ok {
					if s, err := sftplib.NewServer(ch); err == nil {
						s.Serve()
					}
					ch.Close()
				}
			}
		}()
	}
}

// TestUnansweredKeepaliveClosesConnection: a server whose TCP connection
// is fine but that never answers a keepalive (and sends nothing else) is
// declared dead.
func TestUnansweredKeepaliveClosesConnection(t *testing.T) {
	m := startMutedServer(t)
	s := open(t, m.opts)
	put(t, s, "a", "1")
	c := storeConn(s)
	t.Logf("connection closed after %v", waitDead(t, c).Round(time.Millisecond))
	// The next call reconnects (and its connection is closed in turn).
	if data, _, err := s.Get(t.Context(), "a"); err != nil || string(data) != "1" {
		t.Fatalf("Get after the close: %q, %v", data, err)
	}
}

// TestTrafficCountsAsProgress: while bytes keep coming from the server, an
// unanswered keepalive does not close the connection: a slow link busy with
// a transfer may hold the answer back. Here a reader consumes a download in
// small steps for several keepalive timeouts; every step brings bytes.
func TestTrafficCountsAsProgress(t *testing.T) {
	m := startMutedServer(t)
	s := open(t, m.opts)
	const size = 8 << 20
	if err := s.Put(t.Context(), "big", bytes.NewReader(make([]byte, size)), size); err != nil {
		t.Fatal(err)
	}
	// A fresh connection, so that its first keepalive goes unanswered
	// while the reads below go on.
	storeConn(s).close()
	rc, err := s.Open(t.Context(), "big")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	c := storeConn(s)
	buf := make([]byte, 32<<10)
	steps := 0
	for end := time.Now().Add(5 * testKeepaliveTimeout); time.Now().Before(end); steps++ {
		if _, err := io.ReadFull(rc, buf); err != nil {
			t.Fatalf("read %d after %d steps: %v", steps+1, steps, err)
		}
		time.Sleep(testKeepaliveTimeout / 10)
	}
	if c.dead.Load() {
		t.Fatal("the keepalive closed a connection that kept bringing bytes")
	}
	// Once the reads stop, nothing comes, and the connection is closed.
	t.Logf("after %d steps, connection closed %v after the reads stopped", steps, waitDead(t, c).Round(time.Millisecond))
}
