// Package sftptest runs an in-process SSH server on 127.0.0.1 that serves
// SFTP (github.com/pkg/sftp's server, on the real file system) for fast
// tests of the sftp adapter and of the CLI, without OpenSSH. It is not a
// chroot: the client sees the whole file system, and tests use absolute
// roots below Server.Root.
//
// With WithQuirks it serves through pkg/sftp's request server instead, with
// handlers on the real file system below the test's directory, which can
// misbehave as some servers do (see Quirks).
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
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	quirks *Quirks // nil: pkg/sftp's Server; else its RequestServer with fsHandlers
	base   string  // the directory the request server's handlers may touch
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

// Quirks are misbehaviours of an SFTP server, seen in the field (rclone
// serve sftp), that the server of WithQuirks reproduces. The zero Quirks
// is a well-behaved server.
type Quirks struct {
	// HardlinkUnsupported answers hardlink@openssh.com, which the server
	// announces, with SSH_FX_OP_UNSUPPORTED.
	HardlinkUnsupported bool
	// IgnoreExclusive ignores SSH_FXF_EXCL: an open with
	// CREAT|EXCL of an existing file succeeds and truncates it.
	IgnoreExclusive bool
}

// WithQuirks serves SFTP through pkg/sftp's request server
// (sftp.NewRequestServer) with handlers on the real file system that
// misbehave as q says. The server announces what pkg/sftp announces for
// every server in the process (a package-level list, by default
// hardlink@openssh.com, posix-rename@openssh.com and statvfs@openssh.com,
// statvfs then answered SSH_FX_OP_UNSUPPORTED; sftp.SetSFTPExtensions
// changes it for all), never fsync@openssh.com, which the request server
// cannot serve. Paths are the client's, as with
// the default server, but the handlers refuse (permission denied) any path
// outside the test's temporary directory that holds Root: a guard against
// test mistakes, not a security boundary (symbolic links are followed in
// the middle of a path, as OpenSSH's sftp-server does).
func WithQuirks(q Quirks) Option {
	return func(srv *Server) { srv.quirks = &q }
}

// Start starts a server that stops when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	srv := &Server{Root: filepath.Join(dir, "root"), base: dir}
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
					srv.serveSFTP(ch)
					ch.Close()
				}
			}
		}()
	}
}

// serveSFTP serves one SFTP session on ch until it ends.
func (srv *Server) serveSFTP(ch ssh.Channel) {
	if srv.quirks != nil {
		h := &fsHandlers{base: srv.base, quirks: *srv.quirks}
		sftplib.NewRequestServer(ch, sftplib.Handlers{FileGet: h, FilePut: h, FileCmd: h, FileList: h}).Serve()
		return
	}
	s, err := sftplib.NewServer(ch)
	if err == nil {
		s.Serve()
	}
}

// fsHandlers serve pkg/sftp's request server from the real file system,
// below base, with quirks. Paths are the request's (absolute, clean, with
// slashes).
type fsHandlers struct {
	base   string
	quirks Quirks
}

// Interfaces of the request server that fsHandlers implement.
var (
	_ sftplib.OpenFileWriter       = (*fsHandlers)(nil)
	_ sftplib.PosixRenameFileCmder = (*fsHandlers)(nil)
	_ sftplib.LstatFileLister      = (*fsHandlers)(nil)
	_ sftplib.ReadlinkFileLister   = (*fsHandlers)(nil)
	_ sftplib.FileReader           = (*fsHandlers)(nil)
)

// local returns the file-system path of the request path p, or a
// permission error (SSH_FX_PERMISSION_DENIED) if p is outside h.base.
func (h *fsHandlers) local(op, p string) (string, error) {
	lp := filepath.FromSlash(p)
	if lp != h.base && !strings.HasPrefix(lp, h.base+string(filepath.Separator)) {
		return "", &os.PathError{Op: op, Path: p, Err: syscall.EACCES}
	}
	return lp, nil
}

// Fileread opens a file for reading (SSH_FXP_OPEN for reading).
func (h *fsHandlers) Fileread(r *sftplib.Request) (io.ReaderAt, error) {
	p, err := h.local("open", r.Filepath)
	if err != nil {
		return nil, err
	}
	return os.Open(p)
}

// Filewrite opens a file for writing (SSH_FXP_OPEN with a write flag).
func (h *fsHandlers) Filewrite(r *sftplib.Request) (io.WriterAt, error) {
	return h.openFile(r)
}

// OpenFile opens a file for reading and writing.
func (h *fsHandlers) OpenFile(r *sftplib.Request) (sftplib.WriterAtReaderAt, error) {
	return h.openFile(r)
}

// openFile opens a file with the request's flags: O_EXCL is honoured
// unless Quirks.IgnoreExclusive, which truncates instead. APPEND is
// ignored: the client writes at offsets, and os.File.WriteAt refuses
// O_APPEND files.
func (h *fsHandlers) openFile(r *sftplib.Request) (*os.File, error) {
	p, err := h.local("open", r.Filepath)
	if err != nil {
		return nil, err
	}
	pf := r.Pflags()
	flags := os.O_WRONLY
	if pf.Read {
		flags = os.O_RDWR
	}
	if pf.Creat {
		flags |= os.O_CREATE
	}
	if pf.Trunc {
		flags |= os.O_TRUNC
	}
	if pf.Excl {
		if h.quirks.IgnoreExclusive {
			flags |= os.O_TRUNC
		} else {
			flags |= os.O_EXCL
		}
	}
	perm := fs.FileMode(0o644)
	if r.AttrFlags().Permissions {
		perm = r.Attributes().FileMode().Perm()
	}
	return os.OpenFile(p, flags, perm)
}

// Filecmd runs Setstat, Rename, Rmdir, Mkdir, Link, Symlink and Remove.
func (h *fsHandlers) Filecmd(r *sftplib.Request) error {
	p, err := h.local(strings.ToLower(r.Method), r.Filepath)
	if r.Method == "Symlink" { // Filepath is the link's target, not a path served
		p, err = r.Filepath, nil
	}
	if err != nil {
		return err
	}
	var target string
	switch r.Method {
	case "Rename", "Link", "Symlink":
		if target, err = h.local(strings.ToLower(r.Method), r.Target); err != nil {
			return err
		}
	}
	switch r.Method {
	case "Setstat":
		return h.setstat(r, p)
	case "Rename":
		// SFTP v3 rename does not replace (OpenSSH: link, then unlink).
		if _, err := os.Lstat(target); err == nil {
			return &os.LinkError{Op: "rename", Old: p, New: target, Err: syscall.EEXIST}
		}
		return os.Rename(p, target)
	case "Rmdir":
		return pathError("rmdir", p, syscall.Rmdir(p))
	case "Mkdir":
		perm := fs.FileMode(0o755)
		if r.AttrFlags().Permissions {
			perm = r.Attributes().FileMode().Perm()
		}
		return os.Mkdir(p, perm)
	case "Link":
		if h.quirks.HardlinkUnsupported {
			return sftplib.ErrSSHFxOpUnsupported
		}
		return os.Link(p, target)
	case "Symlink":
		return os.Symlink(p, target)
	case "Remove":
		return pathError("remove", p, syscall.Unlink(p)) // never a directory
	default:
		return sftplib.ErrSSHFxOpUnsupported
	}
}

// setstat applies the attributes a Setstat (or Fsetstat) sets.
func (h *fsHandlers) setstat(r *sftplib.Request, p string) error {
	flags, attrs := r.AttrFlags(), r.Attributes()
	if flags.Size {
		if err := os.Truncate(p, int64(attrs.Size)); err != nil {
			return err
		}
	}
	if flags.Permissions {
		if err := os.Chmod(p, attrs.FileMode().Perm()); err != nil {
			return err
		}
	}
	if flags.Acmodtime {
		if err := os.Chtimes(p, attrs.AccessTime(), attrs.ModTime()); err != nil {
			return err
		}
	}
	return nil // owners are not changed
}

// PosixRename renames, replacing any entry at the target
// (posix-rename@openssh.com).
func (h *fsHandlers) PosixRename(r *sftplib.Request) error {
	p, err := h.local("rename", r.Filepath)
	if err != nil {
		return err
	}
	target, err := h.local("rename", r.Target)
	if err != nil {
		return err
	}
	return os.Rename(p, target)
}

// Filelist lists a directory (List) or stats a path, following a final
// symbolic link (Stat, also for Fstat).
func (h *fsHandlers) Filelist(r *sftplib.Request) (sftplib.ListerAt, error) {
	p, err := h.local(strings.ToLower(r.Method), r.Filepath)
	if err != nil {
		return nil, err
	}
	switch r.Method {
	case "List":
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var infos listerAt
		for _, e := range entries {
			fi, err := e.Info() // as Lstat
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since
			}
			if err != nil {
				return nil, err
			}
			infos = append(infos, fi)
		}
		return infos, nil
	case "Stat":
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		return listerAt{fi}, nil
	default:
		return nil, sftplib.ErrSSHFxOpUnsupported
	}
}

// Lstat stats a path without following a final symbolic link.
func (h *fsHandlers) Lstat(r *sftplib.Request) (sftplib.ListerAt, error) {
	p, err := h.local("lstat", r.Filepath)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	return listerAt{fi}, nil
}

// Readlink returns a symbolic link's target as it is stored.
func (h *fsHandlers) Readlink(name string) (string, error) {
	p, err := h.local("readlink", name)
	if err != nil {
		return "", err
	}
	return os.Readlink(p)
}

// pathError wraps a failed system call's err as os functions do (nil stays
// nil), so that the request server maps the errno to an SFTP status.
func pathError(op, p string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: p, Err: err}
}

// listerAt is a complete listing, or one file's attributes.
type listerAt []fs.FileInfo

// ListAt copies the entries from offset on into ls.
func (l listerAt) ListAt(ls []fs.FileInfo, offset int64) (int, error) {
	if offset >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(ls, l[offset:])
	if n < len(ls) {
		return n, io.EOF
	}
	return n, nil
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
