// Package faultproxy is a TCP proxy for tests that puts network faults
// between a client and a server, both on the loopback interface: a
// partition (Stall, then Heal), dropped connections (Cut, CutAfter) and
// refused ones (Refuse).
//
// A test points its client at Proxy.Addr instead of the server:
//
//	p := faultproxy.New(t, srv.Addr)
//	client := dial(p.Addr())
//	p.Stall() // from now on the server looks partitioned away
//
// The proxy listens on a loopback address only (127.0.0.1, or another of
// 127.0.0.0/8 with NewAt) and forwards only to a loopback target. Everything it started (listener, connections, goroutines) stops
// when the test ends, through t.Cleanup.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// dialTimeout bounds connecting to the target for one accepted connection.
const dialTimeout = 5 * time.Second

// Proxy forwards every connection accepted on Addr to its target and
// injects faults on demand. Its methods are safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string
	ctx    context.Context // cancelled when the test ends
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the proxy started
	// upstream counts the client->server bytes forwarded, over every
	// connection.
	upstream atomic.Int64

	mu       sync.Mutex
	conns    map[*conn]struct{}
	healed   chan struct{} // non-nil while stalled; closed by Heal
	cutAfter int64         // > 0: budget of client->server bytes of each connection
	refuse   bool
	closed   bool
	accepted int
}

// conn is one proxied connection: the accepted client side and the dialled
// server side.
type conn struct {
	p      *Proxy
	client net.Conn
	server net.Conn      // nil until dialled (guarded by p.mu)
	done   chan struct{} // closed when the connection is closed
	once   sync.Once
	// Guarded by p.mu:
	budget  int64 // client->server bytes left before the cut; < 0: no cut
	stalled bool  // the connection lived through a stall: Heal closes it
	eofs    int   // directions that ended with EOF
}

// New starts a proxy on 127.0.0.1:0 that forwards to target (host:port,
// a loopback address). It stops when the test ends.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := NewAt(t, "127.0.0.1:0", target)
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	return p
}

// NewAt is New listening on listen, a loopback address and port (a proxy
// that must take the target's port number, on another loopback address).
// It returns the error of the listen, so that a caller can try another.
func NewAt(t testing.TB, listen, target string) (*Proxy, error) {
	t.Helper()
	if h, _, err := net.SplitHostPort(listen); err != nil || !net.ParseIP(h).IsLoopback() {
		t.Fatalf("faultproxy: listen address %q is not a loopback address", listen)
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		t.Fatalf("faultproxy: target %q: %v", target, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		t.Fatalf("faultproxy: target %q is not a loopback address", target)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{ln: ln, target: target, ctx: ctx, cancel: cancel, conns: map[*conn]struct{}{}}
	p.wg.Add(1)
	go p.acceptLoop()
	t.Cleanup(p.close)
	return p, nil
}

// Addr returns the proxy's address, "127.0.0.1:port" (New).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port returns the proxy's TCP port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Forwarded returns how many bytes the proxy forwarded from clients to the
// server so far, over all connections: a test waits for it to grow past a
// size to stall a transfer in the middle.
func (p *Proxy) Forwarded() int64 { return p.upstream.Load() }

// Target returns the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Stall partitions the network: from now on no byte is forwarded, in
// either direction, on any connection, current or new, while every
// connection stays open; neither end sees an error, only silence, as TCP
// sees a network that drops every packet. Senders block once the socket
// buffers fill up. New connections are still accepted (a listening socket
// completes the TCP handshake by itself) but carry nothing either. A write
// that was already under way when Stall was called completes. Stalling a
// stalled proxy does nothing.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.healed != nil {
		return
	}
	p.healed = make(chan struct{})
	for c := range p.conns {
		c.stalled = true
	}
}

// Heal ends a stall. The bytes held during the stall are DROPPED, never
// delivered: every connection that was open during the stall (including
// those accepted during it) is closed on both sides by Heal, as when both
// ends of a TCP connection give up during a long partition, and late
// requests cannot reach the server after the partition. Connections made
// after Heal are forwarded normally. Healing a proxy that is not stalled
// does nothing.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.healed == nil {
		return
	}
	// Close the stalled connections before waking their pumps, so that a
	// pump never forwards a held byte.
	for c := range p.conns {
		if c.stalled {
			c.closeLocked()
		}
	}
	close(p.healed)
	p.healed = nil
}

// Cut closes every current connection, both sides, at once. Bytes held by
// the proxy (during a stall) are dropped.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.closeLocked()
	}
}

// CutAfter makes the proxy close a connection (both sides) once n bytes
// have flowed from its client to its server, counted from now on for the
// current connections and from their start for new ones: exactly n bytes
// are forwarded, then the connection is closed. The rule stays until the
// next CutAfter; n <= 0 removes it.
func (p *Proxy) CutAfter(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutAfter = max(n, 0)
	for c := range p.conns {
		c.budget = p.budgetLocked()
	}
}

// Refuse makes the proxy reset every new connection as soon as it is
// accepted (on when refuse is true, until Refuse(false)). The kernel
// completes the TCP handshake before the proxy sees the connection, so the
// client's connect either fails with "connection reset" or succeeds and its
// first read or write fails. The target never sees the connection; current
// connections are not affected.
func (p *Proxy) Refuse(refuse bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = refuse
}

// Active returns how many proxied connections are open.
func (p *Proxy) Active() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Accepted returns how many connections the proxy accepted so far (refused
// ones included).
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

func (p *Proxy) budgetLocked() int64 {
	if p.cutAfter > 0 {
		return p.cutAfter
	}
	return -1
}

// close stops the proxy: the listener, every connection and every
// goroutine, and waits for them.
func (p *Proxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.closeLocked()
	}
	p.mu.Unlock()
	p.cancel()
	p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		p.accepted++
		if p.closed || p.refuse {
			p.mu.Unlock()
			if tc, ok := nc.(*net.TCPConn); ok {
				tc.SetLinger(0) // reset, not a graceful close
			}
			nc.Close()
			continue
		}
		c := &conn{p: p, client: nc, done: make(chan struct{}), budget: p.budgetLocked(), stalled: p.healed != nil}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go c.run()
	}
}

// run dials the target and forwards both directions until the connection
// ends.
func (c *conn) run() {
	defer c.p.wg.Done()
	d := net.Dialer{Timeout: dialTimeout}
	server, err := d.DialContext(c.p.ctx, "tcp", c.p.target)
	if err != nil {
		c.close()
		return
	}
	c.p.mu.Lock()
	select {
	case <-c.done:
		c.p.mu.Unlock()
		server.Close()
		return
	default:
		c.server = server
	}
	c.p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.pump(server, c.client, true) }()
	go func() { defer wg.Done(); c.pump(c.client, server, false) }()
	wg.Wait()
	c.close()
}

// pump copies src to dst, waiting while the proxy is stalled (before each
// read, so that nothing is consumed, and again before each write, so that
// bytes read as the stall began are held). upstream is the client->server
// direction, which CutAfter counts.
func (c *conn) pump(dst, src net.Conn, upstream bool) {
	buf := make([]byte, 32<<10)
	for {
		if !c.flowing() {
			return
		}
		n, err := src.Read(buf)
		if n > 0 {
			if !c.flowing() {
				return
			}
			data, cut := buf[:n], false
			if upstream {
				data, cut = c.charge(data)
			}
			if len(data) > 0 {
				if _, werr := dst.Write(data); werr != nil {
					c.close()
					return
				}
				if upstream {
					c.p.upstream.Add(int64(len(data)))
				}
			}
			if cut {
				c.close()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) && c.halfClose(dst) {
				return
			}
			c.close()
			return
		}
	}
}

// flowing waits while the proxy is stalled and reports whether the
// connection is still open.
func (c *conn) flowing() bool {
	for {
		select {
		case <-c.done:
			return false
		default:
		}
		c.p.mu.Lock()
		healed := c.p.healed
		c.p.mu.Unlock()
		if healed == nil {
			return true
		}
		select {
		case <-healed:
		case <-c.done:
			return false
		}
	}
}

// charge counts data against the connection's CutAfter budget and returns
// the part to forward, and whether the connection is to be cut after it.
func (c *conn) charge(data []byte) ([]byte, bool) {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if c.budget < 0 {
		return data, false
	}
	if int64(len(data)) >= c.budget {
		data = data[:c.budget]
		c.budget = 0
		return data, true
	}
	c.budget -= int64(len(data))
	return data, false
}

// halfClose passes an EOF on: it shuts dst's write side. It reports false
// when the connection is to be closed now (both directions ended, or dst
// cannot be half-closed).
func (c *conn) halfClose(dst net.Conn) bool {
	tc, ok := dst.(*net.TCPConn)
	if !ok || tc.CloseWrite() != nil {
		return false
	}
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.eofs++
	return c.eofs < 2
}

// close closes both sides of the connection (idempotent).
func (c *conn) close() {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.closeLocked()
}

func (c *conn) closeLocked() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		if c.server != nil {
			c.server.Close()
		}
		delete(c.p.conns, c)
	})
}

// String describes the proxy for test logs.
func (p *Proxy) String() string {
	return "faultproxy " + p.Addr() + " -> " + p.target
}
