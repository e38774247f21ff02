// Package sftptest runs an in-process SSH server on 127.0.0.1 that serves
// SFTP (github.com/pkg/sftp's server, on the real file system) for fast
// tests of the sftp adapter and of the CLI, without OpenSSH. It is not a
// chroot: the client sees the whole file system, and tests use absolute
// roots below Server.Root.
//
// It also describes OpenSSH's sshd of scripts/test-servers (SSHD), and
// writes known_hosts files for a proxy in front of a server (KnownHostsFor).
package sftptest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// Server is an in-process SSH server on 127.0.0.1 that serves SFTP to one
// authorised key, any user name.
type Server struct {
	Addr       string          // 127.0.0.1:port
	Host       string          // 127.0.0.1
	Port       int             // the port
	HostKey    ssh.PublicKey   // the host key KnownHosts lists
	HostKeys   []ssh.PublicKey // every host key the server has (also an ECDSA key KnownHosts omits)
	ClientKey  string          // path of the client's private key (OpenSSH format, no passphrase)
	KnownHosts string          // path of a known_hosts file holding HostKey only
	Root       string          // a fresh directory (not yet created) for the test's data

	muted  bool
	mu     sync.Mutex
	conns  []net.Conn
	logins int
}

// Option configures Start.
type Option func(*Server)

// Muted makes the server never answer a global request (a keepalive): a
// server process that is alive at the TCP level but stuck, or a slow link
// whose answer is held back. Its SFTP service works.
func Muted() Option {
	return func(srv *Server) { srv.muted = true }
}

// Start starts a server that stops when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	srv := &Server{Root: filepath.Join(dir, "root")}
	for _, o := range opts {
		o(srv)
	}
	hostKey, _ := NewKey(t, "", "")
	srv.HostKey = hostKey.PublicKey()
	var client ssh.Signer
	client, srv.ClientKey = NewKey(t, dir, "client")

	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if string(key.Marshal()) != string(client.PublicKey().Marshal()) {
				return nil, errors.New("unknown key")
			}
			return nil, nil
		},
	}
	cfg.AddHostKey(hostKey)
	// A second host key, of a type clients prefer by default, that
	// known_hosts does not list: the client must ask for the listed type.
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecSigner, err := ssh.NewSignerFromKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AddHostKey(ecSigner)
	srv.HostKeys = []ssh.PublicKey{srv.HostKey, ecSigner.PublicKey()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Addr = ln.Addr().String()
	srv.Host = "127.0.0.1"
	srv.Port = ln.Addr().(*net.TCPAddr).Port
	srv.KnownHosts = filepath.Join(dir, "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(srv.Addr)}, srv.HostKey)
	if err := os.WriteFile(srv.KnownHosts, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			srv.mu.Lock()
			srv.conns = append(srv.conns, nc)
			srv.mu.Unlock()
			wg.Go(func() { srv.serve(nc, cfg) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		srv.DropConnections()
		wg.Wait()
	})
	return srv
}

// serve runs one SSH connection: SFTP subsystem requests only.
func (srv *Server) serve(nc net.Conn, cfg *ssh.ServerConfig) {
	defer nc.Close()
	_, chans, reqs, err := ssh.NewServerConn(nc, cfg)
	if err != nil {
		return
	}
	srv.mu.Lock()
	srv.logins++
	srv.mu.Unlock()
	if srv.muted {
		go func() {
			for range reqs { // never answered
			}
		}()
	} else {
		go ssh.DiscardRequests(reqs)
	}
	for nch := range chans {
		if nch.ChannelType() != "session" {
			nch.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, reqs, err := nch.Accept()
		if err != nil {
			return
		}
		go func() {
			for req := range reqs {
				ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
				req.Reply(ok, nil)
				if ok {
					s, err := sftplib.NewServer(ch)
					if err == nil {
						s.Serve()
					}
					ch.Close()
				}
			}
		}()
	}
}

// Login returns what a client needs to log in to the server, as the user
// "tester", with Root the server's Root.
func (srv *Server) Login() Login {
	return Login{Host: srv.Host, Port: srv.Port, User: "tester", ClientKey: srv.ClientKey, KnownHosts: srv.KnownHosts, Root: srv.Root}
}

// DropConnections closes every connection, as a server restart would.
func (srv *Server) DropConnections() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, c := range srv.conns {
		c.Close()
	}
	srv.conns = nil
}

// Logins returns how many clients authenticated.
func (srv *Server) Logins() int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.logins
}

// NewKey generates an ed25519 key. With dir set it also writes the private
// key there in OpenSSH format and returns its path.
func NewKey(t testing.TB, dir, name string) (ssh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		return signer, ""
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return signer, p
}

// Login is what a client needs to reach an SFTP server: its address, a user
// the server lets in, that user's private key, a known_hosts file that
// lists the server's host key, and the root directory of the test's data.
type Login struct {
	Host       string
	Port       int
	User       string
	ClientKey  string // path of the private key
	KnownHosts string // path of the known_hosts file
	Root       string
}

// SSHD returns the login of OpenSSH's sshd that scripts/test-servers
// starts (DISTRIBUTOR_TEST_SFTP_*), with Root the server's root, which
// tests share: see FreshRoot. It skips the test (fails it under CI=true)
// when that server is not configured.
func SSHD(t testing.TB) Login {
	t.Helper()
	env := storagetest.ServerEnv(t, "SFTP",
		"DISTRIBUTOR_TEST_SFTP_ADDR", "DISTRIBUTOR_TEST_SFTP_USER", "DISTRIBUTOR_TEST_SFTP_KEY",
		"DISTRIBUTOR_TEST_SFTP_KNOWN_HOSTS", "DISTRIBUTOR_TEST_SFTP_ROOT")
	host, port, err := net.SplitHostPort(env[0])
	if err != nil {
		t.Fatalf("DISTRIBUTOR_TEST_SFTP_ADDR: %v", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("DISTRIBUTOR_TEST_SFTP_ADDR: %v", err)
	}
	return Login{Host: host, Port: p, User: env[1], ClientKey: env[2], KnownHosts: env[3], Root: env[4]}
}

// FreshRoot returns l with Root a new directory below l.Root, named after
// the test, which is removed when the test ends (the test servers run on
// this machine). The directory itself is not created.
func (l Login) FreshRoot(t testing.TB) Login {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + rand.Text()[:8]
	l.Root = filepath.Join(l.Root, name)
	t.Cleanup(func() { os.RemoveAll(l.Root) })
	return l
}

// KnownHostsFor writes a known_hosts file that lists the host keys of the
// known_hosts file base for the address addr (host:port), and returns its
// path. known_hosts names host and port, so a proxy in front of a server
// needs its own entry.
func KnownHostsFor(t testing.TB, base, addr string) string {
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
