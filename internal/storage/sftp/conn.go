package sftp

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// Extensions of the SFTP protocol the store uses (OpenSSH's names).
const (
	extPosixRename = "posix-rename@openssh.com" // required: atomic replace
	extHardlink    = "hardlink@openssh.com"     // exclusive create of complete content
	extFsync       = "fsync@openssh.com"        // durability before rename
)

// keepaliveRequest is the SSH global request that probes the server, as
// OpenSSH's ServerAliveInterval sends it. Servers that do not know it
// answer with a failure, which proves them alive just as well.
const keepaliveRequest = "keepalive@openssh.com"

// conn is one SSH connection with its SFTP sessions.
type conn struct {
	ssh      *ssh.Client
	sftp     *sftplib.Client // the first session: every request but those of writes (see session)
	net      *progressConn   // the TCP connection under ssh
	hardlink bool            // the server offers hardlink@openssh.com (set before c is shared; see canLink)
	fsync    bool            // the server offers fsync@openssh.com
	noLink   atomic.Bool     // hardlink@openssh.com answered SSH_FX_OP_UNSUPPORTED: offered, but not usable
	dead     atomic.Bool
	once     sync.Once
	done     chan struct{}     // closed by close
	mu       sync.Mutex        // guards sessions and busy; held while a session opens
	sessions []*sftplib.Client // sftp, then those session opened
	busy     []int             // the writes in flight on each session
}

// writeSessions bounds the SFTP sessions of a connection to OpenSSH, which
// serves each in a process of its own, one request at a time: on one session
// each write's fsync waits for the previous one, on several the server's disk
// and cores take them together. (Other servers get one: ProFTPD's mod_sftp
// serves all in one process, and mixes up their handles.)
const writeSessions = 4

// session returns the session for a new write and the func that releases it:
// the least busy one, or while all are busy a new one, up to writeSessions (one
// the server refuses is sftp again). Opening it is bounded as every request on
// c is (keepalive, watch).
func (c *conn) session() (*sftplib.Client, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.busy, slices.Min(c.busy))
	if c.busy[i] > 0 && len(c.sessions) < writeSessions && strings.HasPrefix(string(c.ssh.ServerVersion()), "SSH-2.0-OpenSSH") {
		sc, err := c.open()
		if err != nil {
			sc = c.sftp
		}
		c.sessions, c.busy, i = append(c.sessions, sc), append(c.busy, 0), len(c.sessions)
	}
	c.busy[i]++
	return c.sessions[i], func() { c.mu.Lock(); c.busy[i]--; c.mu.Unlock() }
}

// open starts an SFTP session on c; its end (a server that kills it) marks c dead.
func (c *conn) open() (*sftplib.Client, error) {
	sc, err := sftplib.NewClient(c.ssh, sftplib.UseConcurrentWrites(true))
	if err == nil {
		go func() { sc.Wait(); c.dead.Store(true) }()
	}
	return sc, err
}

// canLink reports whether exclusive creates on c may use hardlink@openssh.com:
// offered, and not refused (see linkUnsupported). Safe for concurrent use.
func (c *conn) canLink() bool {
	return c.hardlink && !c.noLink.Load()
}

// linkUnsupported reports whether err, from a Link on c, is SSH_FX_OP_UNSUPPORTED
// for an announced hardlink@openssh.com (rclone serve sftp on some back ends),
// and then marks c so canLink reports false. The caller redoes it as the O_EXCL
// create the exclusion probe (internal/storage/probe) proves, so the fallback
// adds no unchecked trust. A new connection tries the extension again.
func (c *conn) linkUnsupported(err error) bool {
	var se *sftplib.StatusError
	if !errors.As(err, &se) || se.FxCode() != sftplib.ErrSSHFxOpUnsupported {
		return false
	}
	c.noLink.Store(true)
	return true
}

// close shuts the connection down (idempotent): requests in flight on it
// fail, its keepalive stops, and Store.client dials anew on the next call.
func (c *conn) close() error {
	var err error
	c.once.Do(func() {
		c.dead.Store(true)
		close(c.done)
		// The SSH connection first: closing the SFTP session alone waits for
		// the server to confirm, which a stalled server never does. Closing
		// the transport ends the sessions and every request in flight at once.
		if err = c.ssh.Close(); errors.Is(err, net.ErrClosed) {
			err = nil
		}
	})
	return err
}

// HostKeyError reports a server host key that the known_hosts file does not
// vouch for: the host is not in it (Known is empty), the file lists other
// keys for it (a changed key: possibly a man-in-the-middle), or the key is
// revoked. The connection is refused before anything is sent.
type HostKeyError struct {
	Host           string // the address as known_hosts names it, e.g. "[web1]:2222"
	KeyType        string // the offered key's type, e.g. "ssh-ed25519"
	Fingerprint    string // the offered key's SHA256 fingerprint, "SHA256:..."
	KnownHostsFile string
	Known          []knownhosts.KnownKey // keys the file lists for Host
	Revoked        bool

	addr string // host:port as dialled
}

func (e *HostKeyError) keyscan() string {
	host, port, err := net.SplitHostPort(e.addr)
	if err != nil {
		return "ssh-keyscan HOST"
	}
	if port == "22" {
		return "ssh-keyscan " + host
	}
	return "ssh-keyscan -p " + port + " " + host
}

func (e *HostKeyError) Error() string {
	switch {
	case e.Revoked:
		return fmt.Sprintf("host key %s %s of %s is marked revoked in %s", e.KeyType, e.Fingerprint, e.Host, e.KnownHostsFile)
	case len(e.Known) == 0:
		return fmt.Sprintf("host %s is not in known_hosts_file %s: it offered %s key %s; "+
			"check that fingerprint with the server's administrator, then add the key (e.g. %s >> %s)",
			e.Host, e.KnownHostsFile, e.KeyType, e.Fingerprint, e.keyscan(), e.KnownHostsFile)
	default:
		var known []string
		for _, k := range e.Known {
			known = append(known, fmt.Sprintf("%s %s (%s:%d)", k.Key.Type(), ssh.FingerprintSHA256(k.Key), k.Filename, k.Line))
		}
		return fmt.Sprintf("HOST KEY MISMATCH for %s: it offered %s key %s, but known_hosts_file lists %s; "+
			"someone may be intercepting the connection, or the host key was changed",
			e.Host, e.KeyType, e.Fingerprint, strings.Join(known, ", "))
	}
}

// hostKeys holds the parsed known_hosts file.
type hostKeys struct {
	file     string
	callback ssh.HostKeyCallback
}

func loadHostKeys(file string) (*hostKeys, error) {
	if file == "" {
		return nil, errors.New("known_hosts_file is required: host keys are always verified")
	}
	cb, err := knownhosts.New(file)
	if err != nil {
		return nil, fmt.Errorf("read known_hosts_file: %w", err)
	}
	return &hostKeys{file: file, callback: cb}, nil
}

// check is the ssh.HostKeyCallback: it accepts only a key the file lists for the host, else a *HostKeyError.
func (h *hostKeys) check(hostname string, remote net.Addr, key ssh.PublicKey) error {
	err := h.callback(hostname, remote, key)
	if err == nil {
		return nil
	}
	he := &HostKeyError{
		Host:           knownhosts.Normalize(hostname),
		KeyType:        key.Type(),
		Fingerprint:    ssh.FingerprintSHA256(key),
		KnownHostsFile: h.file,
		addr:           hostname,
	}
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	switch {
	case errors.As(err, &ke):
		he.Known = ke.Want
	case errors.As(err, &re):
		he.Revoked = true
	default:
		return err
	}
	return he
}

// algorithms returns the algorithms of the keys the file lists for addr, so a
// server with several host keys presents one we can check; nil (the default)
// for an unknown host, whose HostKeyError then shows the server's key.
func (h *hostKeys) algorithms(addr string) []string {
	// Any key not in the file makes the callback list the known ones.
	probe, err := ssh.NewPublicKey(probeKey)
	if err != nil {
		return nil
	}
	var ke *knownhosts.KeyError
	if !errors.As(h.callback(addr, &net.TCPAddr{IP: net.IPv4zero}, probe), &ke) {
		return nil
	}
	var algos []string
	for _, k := range ke.Want {
		want := []string{k.Key.Type()}
		if want[0] == ssh.KeyAlgoRSA {
			want = []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
		}
		for _, a := range want {
			if !slices.Contains(algos, a) {
				algos = append(algos, a)
			}
		}
	}
	return algos
}

// probeKey is an ed25519 public key (32 zero bytes) that no server uses.
var probeKey = ed25519.PublicKey(make([]byte, ed25519.PublicKeySize))

// login is the public-key authentication: the keys, what they are (for a
// refused login's message) and the agent connection to close after the handshake.
type login struct {
	keys    []ssh.Signer
	offered []string
	agent   net.Conn
}

func authMethods(opts *Options, signer ssh.Signer) (*login, error) {
	l := &login{}
	if signer != nil {
		l.keys = []ssh.Signer{signer}
		l.offered = []string{fmt.Sprintf("identity_file %s, %s %s", opts.IdentityFile, signer.PublicKey().Type(), ssh.FingerprintSHA256(signer.PublicKey()))}
	}
	if opts.AgentSocket == "" {
		l.offered = append(l.offered, "no ssh agent: SSH_AUTH_SOCK is not set")
	} else if c, err := net.Dial("unix", opts.AgentSocket); err != nil {
		if signer == nil {
			return nil, fmt.Errorf("connect to ssh agent (SSH_AUTH_SOCK): %w", err)
		}
		l.offered = append(l.offered, fmt.Sprintf("not the ssh agent at %s: %v", opts.AgentSocket, err))
	} else {
		l.agent = c
		keys, err := agent.NewClient(c).Signers()
		if err != nil && signer == nil {
			c.Close()
			return nil, fmt.Errorf("ssh agent: %w", err)
		}
		l.keys = append(l.keys, keys...)
		l.offered = append(l.offered, fmt.Sprintf("the %d key(s) of the ssh agent at %s", len(keys), opts.AgentSocket))
	}
	if signer == nil && l.agent == nil {
		return nil, errors.New("no way to authenticate: set identity_file, or run an ssh agent (SSH_AUTH_SOCK)")
	}
	return l, nil
}

// authError is a login that the server refused: it accepted none of the
// keys offered. (golang.org/x/crypto/ssh has no type for it.)
type authError struct {
	user, addr, identityFile string
	offered                  []string
	err                      error
}

func (e *authError) Error() string {
	var keygen string
	if e.identityFile != "" {
		keygen = " (ssh-keygen -y -f " + e.identityFile + " prints it)"
	}
	return fmt.Sprintf("login as %s@%s refused: the server accepted none of the keys offered (%s); add the public key to "+
		"~/.ssh/authorized_keys of %s on the server%s, or set identity_file to a key it accepts",
		e.user, e.addr, strings.Join(e.offered, "; "), e.user, keygen)
}

func (e *authError) Unwrap() error { return e.err }

// loadIdentity reads an unencrypted private key. An encrypted key is
// usable only through the agent: with an agent configured it is skipped
// (nil signer), otherwise it is an error.
func loadIdentity(opts *Options) (ssh.Signer, error) {
	if opts.IdentityFile == "" {
		return nil, nil
	}
	data, err := os.ReadFile(opts.IdentityFile)
	if err != nil {
		return nil, fmt.Errorf("read identity_file: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(data)
	var pe *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &pe) && opts.AgentSocket != "":
		return nil, nil
	case errors.As(err, &pe):
		return nil, fmt.Errorf("identity_file %s is protected by a passphrase: load it into ssh-agent (ssh-add) and set SSH_AUTH_SOCK", opts.IdentityFile)
	case err != nil:
		return nil, fmt.Errorf("identity_file %s: %w", opts.IdentityFile, err)
	}
	return signer, nil
}

// errDialTimeout is a dial context's cause when Options.DialTimeout ran out, not the caller's.
var errDialTimeout = errors.New("dial timeout")

// dial connects, verifies the host key, authenticates and starts the SFTP
// session, all bounded by ctx and s.opts.DialTimeout (a server silent after the
// TCP accept or mid-handshake fails the dial), then starts the keepalive.
func (s *Store) dial(ctx context.Context) (*conn, error) {
	login, err := authMethods(&s.opts, s.signer)
	if err != nil {
		return nil, err
	}
	if login.agent != nil {
		defer login.agent.Close()
	}
	parent := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, s.opts.DialTimeout, errDialTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, s.dialError(parent, ctx, "TCP connect to", err, false)
	}
	nc := &progressConn{Conn: raw, start: time.Now()}
	// The handshake and the SFTP init honour ctx through the deadline
	// (every read and write of the connection fails once it passes), and
	// through AfterFunc when ctx is cancelled earlier.
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	c, err := s.handshake(nc, login)
	if !stop() || err != nil {
		if c != nil {
			c.close()
		}
		nc.Close()
		return nil, s.dialError(parent, ctx, "SSH handshake with", err, nc.lastRead.Load() == 0)
	}
	// From here on the keepalive bounds the wait for the server.
	nc.SetDeadline(time.Time{})
	go c.keepalive(s.opts.KeepaliveInterval, s.opts.KeepaliveTimeout)
	return c, nil
}

// dialError describes a dial step that failed with err (or nil) because ctx
// (derived from parent) ended: the dial timeout (matching context.DeadlineExceeded;
// silent: no byte came) or the caller's context (wrapping its error). Any other err is returned as it is.
func (s *Store) dialError(parent, ctx context.Context, step string, err error, silent bool) error {
	var why error
	switch {
	case parent.Err() != nil:
		why = context.Cause(parent)
	case silent && (errors.Is(context.Cause(ctx), errDialTimeout) || errors.Is(err, os.ErrDeadlineExceeded)):
		// The read the deadline cut says nothing more.
		return fmt.Errorf("%s %s: %w", step, s.addr, noGreeting{s.addr, s.opts.DialTimeout})
	case errors.Is(context.Cause(ctx), errDialTimeout), errors.Is(err, os.ErrDeadlineExceeded):
		// The connection's deadline is the dial's: it may pass just
		// before ctx notices.
		why = fmt.Errorf("no answer within %s (dial timeout): %w", s.opts.DialTimeout, context.DeadlineExceeded)
	case ctx.Err() != nil:
		why = context.Cause(ctx)
	default:
		return err
	}
	if err == nil {
		return fmt.Errorf("%s %s: %w", step, s.addr, why)
	}
	return fmt.Errorf("%s %s: %w (%w)", step, s.addr, why, err)
}

// noGreeting is a server that accepted the TCP connection and sent no byte
// within the dial timeout; it matches context.DeadlineExceeded.
type noGreeting struct {
	addr    string
	timeout time.Duration
}

func (e noGreeting) Error() string {
	return fmt.Sprintf("the server accepted the connection but sent no SSH greeting within %s (dial timeout); check that %s is an SSH server", e.timeout, e.addr)
}

func (noGreeting) Unwrap() error { return context.DeadlineExceeded }

// progressConn is the TCP connection under an SSH connection. It records
// when bytes last came from the server: any byte proves the server alive.
type progressConn struct {
	net.Conn
	start    time.Time    // the base of lastRead (monotonic)
	lastRead atomic.Int64 // time.Since(start) at the last read of at least one byte
}

func (p *progressConn) Read(b []byte) (int, error) {
	n, err := p.Conn.Read(b)
	if n > 0 {
		p.lastRead.Store(int64(time.Since(p.start)))
	}
	return n, err
}

// sinceRead is the time since the last byte from the server (or the dial).
func (p *progressConn) sinceRead() time.Duration {
	return time.Since(p.start) - time.Duration(p.lastRead.Load())
}

// keepalive runs until c is closed: every interval it sends one keepaliveRequest,
// and closes c (requests in flight fail, the next call reconnects) when neither
// a reply nor any other byte from the server (a slow link busy with a large
// transfer may hold the reply back) arrives within timeout, so a dead or
// partitioned server is detected within about interval+timeout.
func (c *conn) keepalive(interval, timeout time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-ticker.C:
		}
		reply := make(chan error, 1)
		go func() {
			// Returns when the reply comes or the connection is closed.
			_, _, err := c.ssh.SendRequest(keepaliveRequest, true, nil)
			reply <- err
		}()
		if !c.await(reply, timeout) {
			c.close()
			return
		}
	}
}

// await waits for a keepalive's reply: false when the request failed or
// timeout passed since both the request and the last byte from the server;
// true when the reply came or c was closed.
func (c *conn) await(reply <-chan error, timeout time.Duration) bool {
	sent := time.Now()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case <-c.done:
			return true
		case err := <-reply:
			return err == nil
		case <-timer.C:
			silent := min(time.Since(sent), c.net.sinceRead())
			if silent >= timeout {
				return false
			}
			timer.Reset(timeout - silent)
		}
	}
}

// handshake runs the SSH handshake and starts the SFTP session on nc.
func (s *Store) handshake(nc *progressConn, l *login) (*conn, error) {
	cfg := &ssh.ClientConfig{
		User:              s.opts.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(l.keys...)},
		HostKeyCallback:   s.hostKeys.check,
		HostKeyAlgorithms: s.hostKeys.algorithms(s.addr),
	}
	cc, chans, reqs, err := ssh.NewClientConn(nc, s.addr, cfg)
	if err != nil && strings.Contains(err.Error(), "ssh: unable to authenticate") {
		return nil, &authError{user: s.opts.User, addr: s.addr, identityFile: s.opts.IdentityFile, offered: l.offered, err: err}
	} else if err != nil {
		return nil, err
	}
	c := &conn{ssh: ssh.NewClient(cc, chans, reqs), net: nc, done: make(chan struct{}), busy: []int{0}}
	sc, err := c.open()
	if err != nil {
		c.ssh.Close()
		return nil, fmt.Errorf("start the sftp subsystem: %w", err)
	}
	c.sftp, c.sessions = sc, []*sftplib.Client{sc}
	if _, ok := sc.HasExtension(extPosixRename); !ok {
		c.close()
		return nil, fmt.Errorf("the server lacks the %s extension, needed for atomic replacement (OpenSSH's sftp-server and internal-sftp have it)", extPosixRename)
	}
	_, c.hardlink = sc.HasExtension(extHardlink)
	_, c.fsync = sc.HasExtension(extFsync)
	return c, nil
}

// client returns the live connection, reconnecting if there is none or it broke.
func (s *Store) client(ctx context.Context) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, os.ErrClosed
	}
	if s.conn != nil && !s.conn.dead.Load() {
		return s.conn, nil
	}
	if s.conn != nil {
		s.conn.close() // dead; a failed dial leaves it there, closed
	}
	c, err := s.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	s.conn = c
	return c, nil
}

// watch closes c if ctx is cancelled and the operation has not finished
// storage.AnswerGrace later (see dirstore.Watch: pkg/sftp cannot cancel one request).
func watch(ctx context.Context, c *conn) (stop func()) {
	return dirstore.Watch(ctx, func() { c.close() })
}
