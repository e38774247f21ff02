package objstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Timeouts are the deadlines of an object store's HTTP requests.
type Timeouts struct {
	// Dial bounds the TCP connect, and then the TLS handshake, of each
	// new connection.
	Dial time.Duration
	// Response bounds the wait for a response's headers once the request
	// is sent.
	Response time.Duration
	// Idle is the progress deadline of a connection: a request fails when
	// no byte has moved on it, in either direction, for this long (a
	// stalled upload or download, a silent server, a network partition).
	// Idle pooled connections are closed after half of it.
	Idle time.Duration
}

// Transport returns a clone of base (http.DefaultTransport's settings when
// nil) with the timeouts installed: its dialers bound by Dial and wrapping
// every connection in a progress deadline of Idle, its
// TLSHandshakeTimeout Dial, its ResponseHeaderTimeout Response and its
// IdleConnTimeout Idle/2.
func Transport(base *http.Transport, t Timeouts) *http.Transport {
	var tr *http.Transport
	if base == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = nil // ours, below
	} else {
		tr = base.Clone()
	}
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 15 * time.Second}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, t.Dial)
		defer cancel()
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return NewProgressConn(c, t.Idle), nil
	}
	if dialTLS := tr.DialTLSContext; dialTLS != nil {
		// A TLS dialer connects and shakes hands: Dial for each.
		tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, 2*t.Dial)
			defer cancel()
			c, err := dialTLS(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return NewProgressConn(c, t.Idle), nil
		}
	}
	tr.TLSHandshakeTimeout = t.Dial
	tr.ResponseHeaderTimeout = t.Response
	// A pooled connection's pending read (the transport watches idle
	// connections) runs into the progress deadline: retire it before.
	tr.IdleConnTimeout = t.Idle / 2
	return tr
}

// ProgressConn is a connection whose every Read and Write moves the
// deadline of both directions to timeout from now: a request fails once
// no byte has moved either way for timeout, however long its transfer
// takes while bytes flow. (A Write extends a Read waiting for the
// response, so a long upload does not time out the wait that follows.)
type ProgressConn struct {
	net.Conn
	timeout time.Duration
}

// NewProgressConn wraps c with a progress deadline of timeout.
func NewProgressConn(c net.Conn, timeout time.Duration) *ProgressConn {
	c.SetDeadline(time.Now().Add(timeout))
	return &ProgressConn{Conn: c, timeout: timeout}
}

func (c *ProgressConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	return n, c.explain(err)
}

func (c *ProgressConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	n, err := c.Conn.Write(p)
	return n, c.explain(err)
}

// explain names the progress deadline in a timeout error.
func (c *ProgressConn) explain(err error) error {
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return &StallError{Idle: c.timeout, Err: err}
}

// StallError is the error of a connection on which no byte moved for the
// idle timeout. Like the deadline error it wraps, it is a net.Error whose
// Timeout is true.
type StallError struct {
	Idle time.Duration // the idle timeout
	Err  error
}

func (e *StallError) Error() string {
	return fmt.Sprintf("no data moved for %s (idle timeout): %v", e.Idle, e.Err)
}

func (e *StallError) Unwrap() error { return e.Err }

// Timeout reports true: the error is a timeout. (A method of net.Error.)
func (e *StallError) Timeout() bool { return true }

// Temporary reports true, as the deadline error does (crypto/tls then
// keeps the connection's state intact; the transport closes it anyway).
func (e *StallError) Temporary() bool { return true }
