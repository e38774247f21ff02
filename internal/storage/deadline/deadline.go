// Package deadline gives the HTTP transport of an object store's client
// (S3, GCS) its deadlines, and an FTP store its progress deadline (Conn), so
// that no request waits forever on a silent server, a stalled transfer or a
// network partition.
package deadline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Timeouts are the deadlines Install puts on a transport; all must be
// positive.
type Timeouts struct {
	// Dial bounds the TCP connect, and then the TLS handshake, of each
	// new connection.
	Dial     time.Duration
	Response time.Duration // the wait for a response's headers
	// Idle is the progress deadline of a connection: a request fails when
	// no byte has moved on its connection, in either direction, for this
	// long. Idle pooled connections are closed after half of it.
	Idle time.Duration
}

// Install puts t on tr, wrapping its dialers (nil DialContext: a
// net.Dialer with a 15s keep-alive) and replacing its timeouts.
func Install(tr *http.Transport, t Timeouts) {
	dial := tr.DialContext
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 15 * time.Second}).DialContext
	}
	tr.DialContext = progressDialer(dial, t.Dial, t.Idle)
	if tr.DialTLSContext != nil {
		// A TLS dialer connects and shakes hands: Dial for each.
		tr.DialTLSContext = progressDialer(tr.DialTLSContext, 2*t.Dial, t.Idle)
	}
	tr.TLSHandshakeTimeout = t.Dial
	tr.ResponseHeaderTimeout = t.Response
	// A pooled connection's pending read (the transport watches idle
	// connections) runs into the progress deadline: retire it before.
	tr.IdleConnTimeout = t.Idle / 2
}

type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// progressDialer bounds dial by timeout; its connections get deadline idle.
func progressDialer(dial dialFunc, timeout, idle time.Duration) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c.SetDeadline(time.Now().Add(idle))
		return &Conn{Conn: c, Idle: idle}, nil
	}
}

// Conn is a connection whose every Read and Write moves the deadline of
// both directions to Idle from now. (A Write extends a Read waiting for the
// response, so a long upload does not time out the wait that follows.) A
// stall fails with a *StallError, which Stalled, if set, sees first.
type Conn struct {
	net.Conn
	Idle    time.Duration
	Stalled func(error)
}

func (c *Conn) Read(p []byte) (int, error)  { return c.move(c.Conn.Read, p) }
func (c *Conn) Write(p []byte) (int, error) { return c.move(c.Conn.Write, p) }

// move moves the deadline, then reads or writes.
func (c *Conn) move(op func([]byte) (int, error), p []byte) (int, error) {
	if err := c.Conn.SetDeadline(time.Now().Add(c.Idle)); err != nil {
		return 0, err
	}
	n, err := op(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = &StallError{Idle: c.Idle, Err: err}
		if c.Stalled != nil {
			c.Stalled(err)
		}
	}
	return n, err
}

// StallError is the error of a connection on which no byte moved for the
// idle timeout Idle. Like the deadline error it wraps, it is a net.Error
// whose Timeout is true.
type StallError struct {
	Idle time.Duration
	Err  error
}

func (e *StallError) Error() string {
	return fmt.Sprintf("no data moved for %s (idle timeout): %v", e.Idle, e.Err)
}

// Unwrap returns the deadline error.
func (e *StallError) Unwrap() error { return e.Err }

// Timeout reports true: the error is a timeout.
func (e *StallError) Timeout() bool { return true }

// Temporary reports true, as the deadline error does (crypto/tls then
// keeps the connection's state intact; the transport closes it anyway).
func (e *StallError) Temporary() bool { return true }
