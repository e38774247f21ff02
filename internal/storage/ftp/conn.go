package ftp

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"os"
	"sync"
	"sync/atomic"
	"time"

	ftplib "github.com/jlaffaye/ftp"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/deadline"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// conn is one logged-in control connection with its data connections,
// used by one call at a time (the pool hands it out).
type conn struct {
	sc     *ftplib.ServerConn
	mlst   bool            // the server has MLST and MLSD
	ctx    context.Context // ends with c: a data connection's dial stops
	cancel context.CancelFunc
	used   time.Time // when it went back to the pool
	// unwatch stops watching the context of the call that holds c (see
	// acquire), nil when none does.
	unwatch func()

	mu    sync.Mutex
	nets  []net.Conn // the control connection, then the current data connection
	cause error      // why c was cut (a stall, a cancel)
	dead  atomic.Bool
}

// close cuts c's connections (idempotent): a call blocked on one fails at
// once, and the pool discards c.
func (c *conn) close() { c.cut(nil) }

// cut is close for the reason why, which do adds to the errors that follow.
func (c *conn) cut(why error) {
	c.dead.Store(true)
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause == nil {
		c.cause = why
	}
	for _, n := range c.nets {
		n.Close()
	}
}

// track records c's new TCP connection n (the control one first); on a
// closed c it closes n and reports false.
func (c *conn) track(n net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead.Load() {
		n.Close()
		return false
	}
	c.nets = append(c.nets[:min(len(c.nets), 1)], n) // the previous data connection is closed
	return true
}

// do returns err, closing c first when err leaves the connection in an
// unknown state (see lost), and then with the reason c was cut.
func (c *conn) do(err error) error {
	if !lost(err) {
		return err
	}
	c.close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause != nil && !errors.Is(err, c.cause) {
		return fmt.Errorf("%w (then: %v)", c.cause, err)
	}
	return err
}

// lost reports whether err is anything but the server's reply or a refused
// command line.
func lost(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if lost(e) {
				return true
			}
		}
		return false
	}
	return err != nil && code(err) == 0 && !errors.Is(err, ftplib.ErrInvalidCommand)
}

// code is the code of the server's reply err, 0 if it is none.
func code(err error) int {
	var reply *textproto.Error
	if errors.As(err, &reply) {
		return reply.Code
	}
	return 0
}

// refused reports whether err is the server's "requested action not
// taken" (550: no such file or directory, not a file, exists, denied).
func refused(err error) bool { return code(err) == ftplib.StatusFileUnavailable }

// errDialTimeout is a dial context's cause when Options.DialTimeout ran out.
var errDialTimeout = errors.New("dial timeout")

// dial connects, secures (Options.TLS), logs in and sets binary mode and
// UTF-8 (where FEAT offers it), within ctx and DialTimeout.
func (s *Store) dial(ctx context.Context) (*conn, error) {
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, s.opts.DialTimeout, errDialTimeout)
	defer cancel()
	c := &conn{}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	var cfg *tls.Config // nil for plain FTP
	if s.opts.TLS != TLSNone {
		// The certificate verified against the system's roots and CAFile,
		// and a session cache of c's own. TLS 1.2 at most: vsftpd 3.0 fails
		// uploads on TLS 1.3 data connections past their first kilobytes
		// (426 "Failure reading network stream"); over TLS 1.2 session
		// tickets resume the control connection's session on vsftpd,
		// Pure-FTPd and ProFTPD alike.
		cfg = &tls.Config{ServerName: cmp.Or(s.opts.ServerName, s.opts.Host), RootCAs: s.roots,
			MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
			ClientSessionCache: tls.NewLRUClientSessionCache(1)}
	}
	opts := []ftplib.DialOption{ftplib.DialWithDialFunc(s.dialFunc(ctx, c, cfg))}
	switch s.opts.TLS {
	case TLSExplicit:
		opts = append(opts, ftplib.DialWithExplicitTLS(cfg))
	case TLSImplicit:
		opts = append(opts, ftplib.DialWithTLS(cfg))
	}
	stop := context.AfterFunc(ctx, c.close)
	sc, err := ftplib.Dial(s.addr, opts...)
	if err == nil {
		if err = sc.Login(s.opts.User, string(s.opts.Password)); code(err) == ftplib.StatusNotLoggedIn {
			err = fmt.Errorf("login as %s refused (check user and password): %w", s.opts.User, err)
		}
	}
	if !stop() || err != nil {
		c.close()
		switch {
		case parent.Err() != nil:
			err = fmt.Errorf("%w (%w)", context.Cause(parent), err)
		case errors.Is(context.Cause(ctx), errDialTimeout):
			err = fmt.Errorf("no login within %s (dial timeout): %w (%w)", s.opts.DialTimeout, context.DeadlineExceeded, err)
		}
		return nil, fmt.Errorf("connect to %s: %w", s.addr, err)
	}
	c.sc, c.mlst = sc, sc.IsTimePreciseInList()
	return c, nil
}

// dialFunc dials c's connections: the control one within ctx (TLS from
// the first byte when implicit), then data ones within DialTimeout, with
// TLS that resumes the control connection's session (cfg's cache is c's
// own) and starts with the first byte: the server shakes hands only after
// the command that opens the connection.
func (s *Store) dialFunc(ctx context.Context, c *conn, cfg *tls.Config) func(network, addr string) (net.Conn, error) {
	control := true
	return func(network, addr string) (net.Conn, error) {
		dctx := ctx
		if !control {
			var cancel context.CancelFunc
			dctx, cancel = context.WithTimeout(c.ctx, s.opts.DialTimeout)
			defer cancel()
		}
		raw, err := (&net.Dialer{KeepAlive: 15 * time.Second}).DialContext(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		if !c.track(raw) {
			return nil, net.ErrClosed
		}
		// Every Read and Write must make progress within IdleTimeout; a
		// stall cuts all of c, so that the steps after it fail at once.
		var nc net.Conn = &deadline.Conn{Conn: raw, Idle: s.opts.IdleTimeout, Stalled: c.cut}
		if cfg != nil && (!control || s.opts.TLS == TLSImplicit) {
			nc = tls.Client(nc, cfg)
		}
		control = false
		return nc, nil
	}
}

// pool hands out at most Options.Connections logged-in connections.
type pool struct {
	slots chan struct{}
	mu    sync.Mutex
	idle  []*conn
	shut  bool
}

// reuseAfter is how long a connection may sit in the pool before it is
// checked with NOOP (servers close idle sessions after minutes).
const reuseAfter = 30 * time.Second

// acquire returns a connection for one call, waiting for a free slot,
// watched (see watch) until release.
func (s *Store) acquire(ctx context.Context) (c *conn, err error) {
	defer func() {
		if err == nil {
			c.unwatch = watch(ctx, c)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case s.pool.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		s.pool.mu.Lock()
		shut, n := s.pool.shut, len(s.pool.idle)
		c = nil
		if n > 0 {
			c, s.pool.idle = s.pool.idle[n-1], s.pool.idle[:n-1]
		}
		s.pool.mu.Unlock()
		if shut {
			<-s.pool.slots
			return nil, os.ErrClosed
		}
		if c == nil {
			break
		}
		if !c.dead.Load() && (time.Since(c.used) < reuseAfter || c.do(c.sc.NoOp()) == nil) {
			return c, nil
		}
		c.close()
	}
	if c, err = s.dial(ctx); err != nil {
		<-s.pool.slots
	}
	return c, err
}

// release stops watching c's call and gives c back to the pool, or closes
// it when it is dead.
func (s *Store) release(c *conn) {
	if c.unwatch != nil {
		c.unwatch()
		c.unwatch = nil
	}
	s.pool.mu.Lock()
	if c.dead.Load() || s.pool.shut {
		c.close()
	} else {
		c.used = time.Now()
		s.pool.idle = append(s.pool.idle, c)
	}
	s.pool.mu.Unlock()
	<-s.pool.slots
}

// watch cuts c if ctx ends and the call has not finished storage.AnswerGrace
// later (see dirstore.Watch).
func watch(ctx context.Context, c *conn) (stop func()) {
	return dirstore.Watch(ctx, func() {
		c.cut(fmt.Errorf("cut %s after the call's context ended: %w", storage.AnswerGrace, context.Cause(ctx)))
	})
}

// upload is a STOR of a temporary file, fed through a pipe by Write.
type upload struct {
	c      *conn
	tmp    string // server path
	pw     *io.PipeWriter
	result chan error // Stor's outcome
	err    error      // once received
	ended  bool
}

// start sends STOR tmp on c and returns once the server opened the file
// (its data connection takes bytes) or refused it.
func start(c *conn, tmp string) (*upload, error) {
	pr, pw := io.Pipe()
	u := &upload{c: c, tmp: tmp, pw: pw, result: make(chan error, 1)}
	opened := make(chan struct{})
	open := sync.OnceFunc(func() { close(opened) })
	go func() {
		err := c.sc.Stor(tmp, readFunc(func(b []byte) (int, error) { open(); return pr.Read(b) }))
		pr.CloseWithError(cmp.Or(err, io.ErrClosedPipe))
		u.result <- err
	}()
	select {
	case <-opened:
		return u, nil
	case err := <-u.result:
		u.ended = true
		return nil, c.do(err)
	}
}

// Write implements io.Writer: the bytes go to the data connection.
func (u *upload) Write(b []byte) (int, error) { return u.pw.Write(b) }

// finish ends the upload and returns the server's verdict on it. An
// upload whose source failed ends as a complete one (the server keeps what
// came, which the caller removes): one cut short instead (a TLS data
// connection closed before its handshake, when no byte came) can leave the
// control connection unusable, and a writer whose context ended (its fence
// lapsed) removes its temporary file only on that connection (see cleanup).
func (u *upload) finish() error {
	if u.ended {
		return u.err
	}
	u.ended = true
	u.pw.Close()
	u.err = u.c.do(<-u.result)
	return u.err
}

// readFunc is an io.Reader of its func.
type readFunc func([]byte) (int, error)

func (f readFunc) Read(b []byte) (int, error) { return f(b) }
