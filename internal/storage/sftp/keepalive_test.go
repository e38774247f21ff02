package sftp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// The keepalive settings of the tests: a stalled server is detected within
// about 500ms on an idle machine (they grow with the test-wide time factor).
var (
	testKeepaliveInterval = testtime.Scale(200 * time.Millisecond)
	testKeepaliveTimeout  = testtime.Scale(300 * time.Millisecond)
	testDialTimeout       = testtime.Scale(time.Second)
)

// viaProxy puts a faultproxy in front of the server of opts and returns
// Options that reach it through the proxy, with the tests' short dial
// timeout and keepalive.
func viaProxy(t *testing.T, opts Options) (Options, *faultproxy.Proxy) {
	t.Helper()
	p := faultproxy.New(t, net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	opts.KnownHostsFile = sftptest.KnownHostsFor(t, opts.KnownHostsFile, p.Addr())
	opts.Host, opts.Port = "127.0.0.1", p.Port()
	opts.DialTimeout = testDialTimeout
	opts.KeepaliveInterval = testKeepaliveInterval
	opts.KeepaliveTimeout = testKeepaliveTimeout
	return opts, p
}

// storeConn returns the store's current connection (nil if none).
func storeConn(s *Store) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// waitDead waits up to storagetest.HangBound for c to be closed.
func waitDead(t *testing.T, c *conn) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-c.done:
		return time.Since(start)
	case <-time.After(storagetest.HangBound):
		t.Fatalf("the connection is still open %v after the server stalled", storagetest.HangBound)
		return 0
	}
}

// proxiedStores opens a store on each of the servers through a proxy of
// its own, for the partition tests of storagetest.
func proxiedStores(t *testing.T, fn func(t *testing.T, s storage.Store, p storagetest.Partition)) {
	servers(t, func(t *testing.T, opts Options) {
		opts, p := viaProxy(t, opts)
		fn(t, open(t, opts), p)
	})
}

// TestStalledPutFails: a Put whose server stops answering half-way (a
// network partition: the TCP connection stays open, no byte flows) fails
// within about the keepalive interval plus timeout (then the dial timeout
// of its cleanup's fresh connection) instead of hanging, and once the
// network heals the same Store works again.
func TestStalledPutFails(t *testing.T) {
	storagetest.StalledPut(t, proxiedStores, 16<<20)
}

// TestStalledReadsFail: Get, Stat and a streaming read that the server
// stops answering (before the request, or half-way through the transfer)
// fail within the bound, and the Store works again after the heal.
func TestStalledReadsFail(t *testing.T) {
	storagetest.StalledReads(t, proxiedStores, 8<<20)
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
	err = storagetest.Bounded(t, "New", func() error {
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
	err := storagetest.Bounded(t, "New", func() error {
		_, err := New(context.Background(), opts)
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("New through a stall: %v; want a dial timeout", err)
	}
}

// mutedServer starts an SSH server that serves SFTP but never answers
// global requests (keepalives): a server process that is alive at the TCP
// level but stuck, or a slow link whose answer is held back. It returns
// Options for a client of the server, with the tests' keepalive.
func mutedServer(t *testing.T) Options {
	t.Helper()
	opts := loginOptions(sftptest.Start(t, sftptest.Muted()).Login())
	opts.KeepaliveInterval, opts.KeepaliveTimeout = testKeepaliveInterval, testKeepaliveTimeout
	return opts
}

// TestUnansweredKeepaliveClosesConnection: a server whose TCP connection
// is fine but that never answers a keepalive (and sends nothing else) is
// declared dead.
func TestUnansweredKeepaliveClosesConnection(t *testing.T) {
	s := open(t, mutedServer(t))
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
	s := open(t, mutedServer(t))
	const size = 8 << 20
	if _, err := s.Put(t.Context(), "big", bytes.NewReader(make([]byte, size)), size, storage.PutOptions{}); err != nil {
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
