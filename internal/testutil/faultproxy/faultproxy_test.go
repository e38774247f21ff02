package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// echoServer echoes every connection and records how many bytes each
// closed connection received.
type echoServer struct {
	ln net.Listener
	wg sync.WaitGroup

	mu       sync.Mutex
	conns    map[net.Conn]bool
	accepted int
	totals   []int64 // per closed connection, in the order they closed
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.accepted++
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Add(1)
			go s.serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *echoServer) serve(c net.Conn) {
	defer s.wg.Done()
	var total int64
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		total += int64(n)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				err = werr
			}
		}
		if err != nil {
			break
		}
	}
	c.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	s.totals = append(s.totals, total)
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

// closed returns the byte totals of the connections closed so far.
func (s *echoServer) closed() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.totals...)
}

func (s *echoServer) acceptedConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// eventually polls cond every 5ms for up to 5s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes msg and reads its echo.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read echo: %v", err)
	}
	if string(got) != msg {
		t.Fatalf("echo %q, want %q", got, msg)
	}
}

// silent checks that nothing comes back on c for a while.
func silent(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	n, err := c.Read(make([]byte, 1))
	var ne net.Error
	if n > 0 || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read during a stall: %d bytes, %v; want a timeout", n, err)
	}
}

// broken checks that c was closed by the proxy: a read fails (EOF or
// reset) well before its deadline.
func broken(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open: %v", err)
	}
}

func TestForward(t *testing.T) {
	srv := startEcho(t)
	p := New(t, srv.addr())
	if _, port, _ := net.SplitHostPort(p.Addr()); port != strconv.Itoa(p.Port()) {
		t.Errorf("Addr %s and Port %d disagree", p.Addr(), p.Port())
	}
	c := dial(t, p)
	roundTrip(t, c, "hello")
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB, both ways at once
	go c.Write(big)
	got := make([]byte, len(big))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("echo of 256 KiB: %v", err)
	}
	if p.Active() != 1 || p.Accepted() != 1 {
		t.Errorf("Active %d, Accepted %d; want 1, 1", p.Active(), p.Accepted())
	}
	if got, want := p.Forwarded(), int64(len("hello")+len(big)); got != want {
		t.Errorf("Forwarded %d, want %d (the client's bytes)", got, want)
	}
}

func TestStallHeal(t *testing.T) {
	srv := startEcho(t)
	p := New(t, srv.addr())
	before := dial(t, p)
	roundTrip(t, before, "hello")
	p.Stall()
	if _, err := before.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	silent(t, before, 200*time.Millisecond)
	during := dial(t, p) // accepted, but carries nothing
	if _, err := during.Write([]byte("held too")); err != nil {
		t.Fatal(err)
	}
	silent(t, during, 100*time.Millisecond)
	if p.Active() != 2 {
		t.Errorf("Active %d during the stall, want 2 (connections stay open)", p.Active())
	}
	p.Heal()
	broken(t, before)
	broken(t, during)
	if p.Active() != 0 {
		t.Errorf("Active %d after Heal, want 0", p.Active())
	}
	// The server saw both connections close, and none of the held bytes.
	eventually(t, "the server to see both connections close", func() bool { return len(srv.closed()) == 2 })
	for _, n := range srv.closed() {
		if n != 0 && n != 5 {
			t.Errorf("the server received %d bytes on a stalled connection; want only the 5 sent before the stall", n)
		}
	}
	after := dial(t, p)
	roundTrip(t, after, "healed")
}

func TestCut(t *testing.T) {
	srv := startEcho(t)
	p := New(t, srv.addr())
	a, b := dial(t, p), dial(t, p)
	roundTrip(t, a, "a")
	roundTrip(t, b, "b")
	p.Cut()
	broken(t, a)
	broken(t, b)
	eventually(t, "the server to see both connections close", func() bool { return len(srv.closed()) == 2 })
	roundTrip(t, dial(t, p), "next")
}

func TestCutAfter(t *testing.T) {
	srv := startEcho(t)
	p := New(t, srv.addr())
	current := dial(t, p)
	roundTrip(t, current, "12345") // before the rule: not counted
	p.CutAfter(10)
	payload := bytes.Repeat([]byte("x"), 25)
	if _, err := current.Write(payload); err != nil {
		t.Fatal(err)
	}
	broken(t, current)
	eventually(t, "the server to see the cut", func() bool { return len(srv.closed()) == 1 })
	if got := srv.closed()[0]; got != 15 {
		t.Errorf("server received %d bytes on the current connection, want 5 + 10", got)
	}
	// New connections are cut too, from their start.
	fresh := dial(t, p)
	if _, err := fresh.Write(payload); err != nil {
		t.Fatal(err)
	}
	broken(t, fresh)
	eventually(t, "the server to see the second cut", func() bool { return len(srv.closed()) == 2 })
	if got := srv.closed()[1]; got != 10 {
		t.Errorf("server received %d bytes on a new connection, want 10", got)
	}
	// CutAfter(0) removes the rule.
	p.CutAfter(0)
	c := dial(t, p)
	roundTrip(t, c, string(payload))
	roundTrip(t, c, string(payload))
}

func TestRefuse(t *testing.T) {
	srv := startEcho(t)
	p := New(t, srv.addr())
	kept := dial(t, p)
	roundTrip(t, kept, "kept")
	p.Refuse(true)
	// The reset may come before Dial returns (it then fails) or after.
	if refused, err := net.Dial("tcp", p.Addr()); err == nil {
		refused.Write([]byte("x"))
		broken(t, refused)
		refused.Close()
	}
	eventually(t, "the refused connection to be accepted", func() bool { return p.Accepted() == 2 })
	roundTrip(t, kept, "still") // current connections are not affected
	if n := srv.acceptedConns(); n != 1 {
		t.Errorf("the server saw %d connections, want 1 (a refused one never reaches it)", n)
	}
	p.Refuse(false)
	roundTrip(t, dial(t, p), "again")
}

func TestTargetMustBeLoopback(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	func() {
		defer func() { recover() }()
		New(ft, "192.0.2.1:22")
	}()
	if !ft.failed {
		t.Error("New accepted a non-loopback target")
	}
}

// fatalRecorder records Fatalf instead of ending the test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (f *fatalRecorder) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}

func (f *fatalRecorder) Helper() {}

// TestNoLeak: once the test that made a proxy ends, every goroutine the
// proxy started has ended, whatever state it was left in (stalled, with
// open connections, in the middle of a transfer).
func TestNoLeak(t *testing.T) {
	srv := startEcho(t)
	base := runtime.NumGoroutine()
	t.Run("stalled", func(t *testing.T) {
		p := New(t, srv.addr())
		c := dial(t, p)
		roundTrip(t, c, "x")
		p.CutAfter(1 << 20)
		p.Stall()
		go c.Write(bytes.Repeat([]byte("y"), 8<<20)) // blocks: nothing is read
		dial(t, p)
	})
	eventually(t, "the proxy's goroutines to end", func() bool { return runtime.NumGoroutine() <= base })
}
