package sftp

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestConformance runs the storage conformance suite against the in-process
// SFTP server (always) and the real servers started by scripts/test-servers:
// OpenSSH's sshd and ProFTPD's mod_sftp.
func TestConformance(t *testing.T) {
	t.Run("inprocess", func(t *testing.T) {
		srv := newTestServer(t)
		n := 0
		storagetest.Run(t, func(t *testing.T) storage.Store {
			n++
			opts := srv.options()
			opts.Root = filepath.Join(srv.root, strconv.Itoa(n))
			return open(t, opts)
		}, storagetest.WithPlantTemp(plantTemp), tempCreate, makeDir)
	})
	t.Run("sshd", func(t *testing.T) {
		sshd := sftptest.SSHD(t)
		storagetest.Run(t, func(t *testing.T) storage.Store {
			return open(t, loginOptions(sshd.FreshRoot(t)))
		}, storagetest.WithPlantTemp(plantTemp), tempCreate, makeDir)
	})
	t.Run("proftpd", func(t *testing.T) {
		proftpd := sftptest.ProFTPD(t)
		storagetest.Run(t, func(t *testing.T) storage.Store {
			return open(t, loginOptions(proftpd.FreshRoot(t)))
		}, storagetest.WithPlantTemp(plantTemp), tempCreate, makeDir)
	})
}

// plantTemp writes a temporary file, as a dropped connection leaves it, in
// the directory dir of the store s, through the file system (the test
// servers run on this machine).
func plantTemp(t *testing.T, s storage.Store, dir string) string {
	return storagetest.PlantTempFile(t, s.(*Store).root, dir)
}

// makeDir makes an empty directory in the root of the store s through
// the file system (the test servers run on this machine), as an operator
// does.
var makeDir = storagetest.WithMakeDir(func(t *testing.T, s storage.Store, dir string) {
	if err := os.MkdirAll(filepath.Join(s.(*Store).root, filepath.FromSlash(dir)), 0o755); err != nil {
		t.Fatal(err)
	}
})

// tempCreate lets the suite race exclusive creates against sweeps (the
// test servers run on this machine and have hardlink@openssh.com).
var tempCreate = storagetest.WithTempCreate(storagetest.TempCreate{
	Reopen:     func(t *testing.T, s storage.Store) storage.Store { return open(t, s.(*Store).opts) },
	Dir:        func(s storage.Store) string { return s.(*Store).root },
	Races:      60,
	RaceSpread: time.Millisecond,
})

// servers runs fn against the in-process server and the real sshd.
func servers(t *testing.T, fn func(t *testing.T, opts Options)) {
	t.Run("inprocess", func(t *testing.T) { fn(t, newTestServer(t).options()) })
	t.Run("sshd", func(t *testing.T) { fn(t, sshdOptions(t)) })
}

// sshdOptions describes the real sshd of scripts/test-servers, with a
// fresh root below the server's root, or skips (fails under CI) when it is
// not running.
func sshdOptions(t *testing.T) Options {
	t.Helper()
	return loginOptions(sftptest.SSHD(t).FreshRoot(t))
}

// loginOptions returns Options for a test server's login.
func loginOptions(l sftptest.Login) Options {
	return Options{Host: l.Host, Port: l.Port, User: l.User, IdentityFile: l.ClientKey, KnownHostsFile: l.KnownHosts, Root: l.Root}
}

func open(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func put(t testing.TB, s storage.Store, p, data string) {
	t.Helper()
	if _, err := s.Put(t.Context(), p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
}

func list(t testing.TB, s storage.Store, prefix string) []string {
	t.Helper()
	var ps []string
	if err := s.List(t.Context(), prefix, func(i storage.Info) error {
		ps = append(ps, i.Path)
		return nil
	}); err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return ps
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func TestString(t *testing.T) {
	srv := newTestServer(t)
	s := open(t, srv.options())
	if want := "sftp://tester@" + srv.addr + srv.root; s.String() != want {
		t.Errorf("String() = %q, want %q", s.String(), want)
	}
	_, err := s.Stat(t.Context(), "dir/missing")
	if err == nil || !strings.Contains(err.Error(), s.String()+": stat dir/missing: ") {
		t.Errorf("error %q does not name the store, operation and path", err)
	}
}

func TestOptionsChecked(t *testing.T) {
	srv := newTestServer(t)
	for name, edit := range map[string]func(*Options){
		"no host":          func(o *Options) { o.Host = "" },
		"no user":          func(o *Options) { o.User = "" },
		"relative root":    func(o *Options) { o.Root = "www" },
		"no known_hosts":   func(o *Options) { o.KnownHostsFile = "" },
		"missing key file": func(o *Options) { o.IdentityFile = filepath.Join(t.TempDir(), "nope") },
		"no auth":          func(o *Options) { o.IdentityFile = "" },
		"bad port":         func(o *Options) { o.Port = 70000 },
	} {
		t.Run(name, func(t *testing.T) {
			opts := srv.options()
			edit(&opts)
			if s, err := New(t.Context(), opts); err == nil {
				s.Close()
				t.Error("New succeeded")
			}
		})
	}
}

// wantHostKeyError checks that err is a *HostKeyError naming the server's
// address and the fingerprint of one of its keys.
func wantHostKeyError(t *testing.T, err error, srv *testServer, known bool) {
	t.Helper()
	var he *HostKeyError
	if !errors.As(err, &he) {
		t.Fatalf("got %v, want a *HostKeyError", err)
	}
	named := false
	for _, key := range srv.hostKeys {
		fp := ssh.FingerprintSHA256(key)
		named = named || strings.HasPrefix(fp, "SHA256:") && strings.Contains(err.Error(), fp) && he.Fingerprint == fp
	}
	if host := knownhosts.Normalize(srv.addr); !named || !strings.Contains(err.Error(), host) {
		t.Errorf("error %q does not name host %s and the fingerprint of a key of the server", err, host)
	}
	if (len(he.Known) > 0) != known {
		t.Errorf("Known = %v", he.Known)
	}
}

func TestUnknownHostKeyRefused(t *testing.T) {
	srv := newTestServer(t)
	opts := srv.options()
	opts.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(opts.KnownHostsFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(t.Context(), opts)
	wantHostKeyError(t, err, srv, false)
	if !strings.Contains(err.Error(), "ssh-keyscan -p "+strconv.Itoa(opts.Port)+" 127.0.0.1 >> "+opts.KnownHostsFile) {
		t.Errorf("error %q does not say how to add the key", err)
	}
	if n := srv.loginCount(); n != 0 {
		t.Errorf("%d logins with an unknown host key", n)
	}
	if exists(srv.root) {
		t.Error("the root was created")
	}
}

func TestChangedHostKeyRefused(t *testing.T) {
	srv := newTestServer(t)
	opts := srv.options()
	other, _ := newKey(t, "", "")
	opts.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(srv.addr)}, other.PublicKey())
	if err := os.WriteFile(opts.KnownHostsFile, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(t.Context(), opts)
	wantHostKeyError(t, err, srv, true)
	if !strings.Contains(err.Error(), "MISMATCH") || !strings.Contains(err.Error(), ssh.FingerprintSHA256(other.PublicKey())) {
		t.Errorf("error %q does not say the key changed and which key was expected", err)
	}
	if n := srv.loginCount(); n != 0 {
		t.Errorf("%d logins with a changed host key", n)
	}
}

func TestRevokedHostKeyRefused(t *testing.T) {
	srv := newTestServer(t)
	opts := srv.options()
	revoked := "@revoked * " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(srv.HostKey)))
	data, err := os.ReadFile(opts.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(opts.KnownHostsFile, append(data, revoked+"\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = New(t.Context(), opts)
	var he *HostKeyError
	if !errors.As(err, &he) || !he.Revoked {
		t.Fatalf("got %v, want a revoked *HostKeyError", err)
	}
}

func TestUnknownHostKeyRefusedBySshd(t *testing.T) {
	opts := sshdOptions(t)
	opts.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(opts.KnownHostsFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(t.Context(), opts)
	var he *HostKeyError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "SHA256:") || !strings.Contains(err.Error(), he.Host) {
		t.Fatalf("got %v, want a *HostKeyError naming host and fingerprint", err)
	}
}

// TestHostKeyAlgorithmFromKnownHosts: a server with several host keys
// presents the one known_hosts lists.
func TestHostKeyAlgorithmFromKnownHosts(t *testing.T) {
	s := open(t, sshdOptions(t))
	put(t, s, "x", "x")
}

func TestAgentAuthentication(t *testing.T) {
	srv := newTestServer(t)
	keyData, err := os.ReadFile(srv.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ssh.ParseRawPrivateKey(keyData)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: raw}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				agent.ServeAgent(keyring, c)
			}()
		}
	}()
	opts := srv.options()
	opts.IdentityFile = ""
	opts.AgentSocket = sock
	s := open(t, opts)
	put(t, s, "via-agent", "ok")

	// A passphrase-protected identity file is skipped in favour of the agent.
	_, priv, _ := ed25519GenerateKey()
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	opts.IdentityFile = filepath.Join(t.TempDir(), "encrypted")
	if err := os.WriteFile(opts.IdentityFile, pemEncode(block), 0o600); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, opts)
	put(t, s2, "via-agent-2", "ok")
	// Without the agent it is an error that says what to do.
	opts.AgentSocket = ""
	if _, err := New(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "passphrase") {
		t.Errorf("New with an encrypted key and no agent: %v", err)
	}
}

func TestReconnectsAfterConnectionLoss(t *testing.T) {
	srv := newTestServer(t)
	s := open(t, srv.options())
	put(t, s, "a", "1")
	srv.dropConnections()
	// The first call after the drop may fail; the store reconnects.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, _, err := s.Get(t.Context(), "a")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconnect: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := srv.loginCount(); n != 2 {
		t.Errorf("%d logins, want 2", n)
	}
}

func TestCancelledContextAbortsDial(t *testing.T) {
	// A listener that accepts and never speaks SSH.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	srv := newTestServer(t)
	opts := srv.options()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	opts.Host, opts.Port = host, atoi(port)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := New(ctx, opts); err == nil {
		t.Fatal("New succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("New took %v after its context ended", d)
	}
}

func TestClose(t *testing.T) {
	srv := newTestServer(t)
	s, err := New(t.Context(), srv.options())
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "x", "x")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Stat(t.Context(), "x"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Stat after Close: got %v, want os.ErrClosed", err)
	}
}

func TestMissingRootReadsEmptyAndIsCreatedByFirstWrite(t *testing.T) {
	srv := newTestServer(t)
	opts := srv.options()
	opts.Root = filepath.Join(srv.root, "new", "root")
	s := open(t, opts)
	ctx := t.Context()
	if got := list(t, s, ""); len(got) != 0 {
		t.Errorf("List = %q", got)
	}
	if _, err := s.Stat(ctx, "x"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Stat: %v", err)
	}
	if err := s.Delete(ctx, "x"); err != nil {
		t.Errorf("Delete: %v", err)
	}
	if _, err := storage.PutIf(ctx, s, "x", []byte("x"), "sha256:00"); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf(version): %v", err)
	}
	if exists(filepath.Join(srv.root, "new")) {
		t.Fatal("reads created the root")
	}
	put(t, s, "a/b", "first")
	if got, err := os.ReadFile(filepath.Join(opts.Root, "a", "b")); err != nil || string(got) != "first" {
		t.Fatalf("file on the server: %q, %v", got, err)
	}
}

func TestTempFilesHiddenAndNotAddressable(t *testing.T) {
	srv := newTestServer(t)
	s := open(t, srv.options())
	put(t, s, "d/a", "a")
	for _, p := range []string{storage.TempPrefix + "crash1", "d/" + storage.TempPrefix + "crash2"} {
		if err := os.WriteFile(filepath.Join(srv.root, p), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := list(t, s, ""); !slices.Equal(got, []string{"d/a"}) {
		t.Errorf("List = %q", got)
	}
	tmp := "d/" + storage.TempPrefix + "crash2"
	if _, err := s.Stat(t.Context(), tmp); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("Stat(%q): %v", tmp, err)
	}
}

func TestFailedWritesLeaveNothing(t *testing.T) {
	srv := newTestServer(t)
	s := open(t, srv.options())
	ctx := t.Context()
	put(t, s, "keep/old", "old")
	if _, err := s.Put(ctx, "keep/new/dirs/f", strings.NewReader("short"), 10, storage.PutOptions{}); err == nil {
		t.Error("short Put succeeded")
	}
	if _, err := storage.PutIf(ctx, s, "b/c/lock", []byte("x"), "sha256:00"); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf(version) of an absent object: %v", err)
	}
	var left []string
	filepath.WalkDir(srv.root, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != srv.root {
			rel, _ := filepath.Rel(srv.root, p)
			left = append(left, rel)
		}
		return nil
	})
	if want := []string{"keep", "keep/old"}; !slices.Equal(left, want) {
		t.Errorf("on the server: %q, want %q", left, want)
	}
}

func TestDeletePrunesEmptyDirectories(t *testing.T) {
	srv := newTestServer(t)
	s := open(t, srv.options())
	ctx := t.Context()
	put(t, s, "a/b/c/f", "f")
	put(t, s, "a/g", "g")
	if err := s.Delete(ctx, "a/b/c/f"); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(srv.root, "a", "b")) || !exists(filepath.Join(srv.root, "a", "g")) {
		t.Error("a/b left, or a/g removed")
	}
	if err := s.Delete(ctx, "a/g"); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(srv.root); err != nil || len(entries) != 0 {
		t.Errorf("root: %v, %v", entries, err)
	}
	// The freed name can now be a file, and a directory is not deleted.
	put(t, s, "a", "now a file")
	put(t, s, "d/x", "x")
	if err := s.Delete(ctx, "d"); err != nil || !exists(filepath.Join(srv.root, "d", "x")) {
		t.Errorf("Delete of a directory: %v", err)
	}
}

func TestSymlinksNeverFollowed(t *testing.T) {
	srv := newTestServer(t)
	s := open(t, srv.options())
	ctx := t.Context()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	put(t, s, "real", "real")
	for name, target := range map[string]string{"linkdir": outside, "linkfile": filepath.Join(outside, "secret")} {
		if err := os.Symlink(target, filepath.Join(srv.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if got := list(t, s, ""); !slices.Equal(got, []string{"linkdir/", "linkfile/", "real"}) { // links take paths, not followed
		t.Errorf("List = %q", got)
	}
	if got := list(t, s, "linkdir/"); len(got) != 0 {
		t.Errorf("List(linkdir/) = %q", got)
	}
	if _, err := s.Stat(ctx, "linkfile"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Stat(linkfile): %v", err)
	}
	for _, p := range []string{"linkfile", "linkdir", "linkdir/secret"} {
		_, err := s.ReadVersioned(ctx, p, func(io.Reader) error { return errors.New("fn called") })
		if !errors.Is(err, storage.ErrNotExist) || p != "linkdir/secret" && !errors.Is(err, storage.ErrNotObject) {
			t.Errorf("ReadVersioned(%s): %v, want ErrNotExist (ErrNotObject for a link)", p, err)
		}
	}
	if _, err := s.Put(ctx, "linkdir/new", strings.NewReader("x"), 1, storage.IfVersion("")); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("PutIfStream below a linked directory: %v", err)
	}
	if _, err := s.Put(ctx, "linkdir/new", strings.NewReader("x"), 1, storage.PutOptions{}); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("Put below a linked directory: %v", err)
	}
	if _, err := storage.PutIf(ctx, s, "linkfile", []byte("x"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf create over a link: %v", err)
	}
	put(t, s, "linkfile", "replaced")
	if got, _ := os.ReadFile(filepath.Join(outside, "secret")); string(got) != "secret" {
		t.Errorf("the link's target was written: %q", got)
	}
	if err := s.Delete(ctx, "linkdir"); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(outside, "secret")) {
		t.Error("Delete followed a link")
	}
}

// TestExclusiveCreateWithoutHardlink covers servers without
// hardlink@openssh.com: PutIf falls back to O_EXCL.
func TestExclusiveCreateWithoutHardlink(t *testing.T) {
	if err := sftplib.SetSFTPExtensions("posix-rename@openssh.com"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sftplib.SetSFTPExtensions("posix-rename@openssh.com", "hardlink@openssh.com", "statvfs@openssh.com")
	})
	srv := newTestServer(t)
	s := open(t, srv.options())
	if s.conn.hardlink {
		t.Fatal("the server still offers hardlink@openssh.com")
	}
	ctx := t.Context()
	if _, err := storage.PutIf(ctx, s, "x/lock", []byte("one"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.PutIf(ctx, s, "x/lock", []byte("two"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("second create: %v", err)
	}
	if data, _, err := s.Get(ctx, "x/lock"); err != nil || string(data) != "one" {
		t.Errorf("Get = %q, %v", data, err)
	}
}

func TestNoPosixRenameRefused(t *testing.T) {
	if err := sftplib.SetSFTPExtensions("hardlink@openssh.com"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sftplib.SetSFTPExtensions("posix-rename@openssh.com", "hardlink@openssh.com", "statvfs@openssh.com")
	})
	srv := newTestServer(t)
	_, err := New(t.Context(), srv.options())
	if err == nil || !strings.Contains(err.Error(), "posix-rename@openssh.com") {
		t.Errorf("New against a server without posix-rename: %v", err)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestSweepTemp(t *testing.T) {
	srv := newTestServer(t)
	s := open(t, srv.options())
	ctx := t.Context()
	if found, err := s.SweepTemp(ctx, storage.SweepOptions{}); len(found) != 0 || err != nil {
		t.Errorf("SweepTemp of a missing root = %q, %v", found, err)
	}
	put(t, s, "d/a", "a")
	for _, p := range []string{storage.TempPrefix + "1", "d/" + storage.TempPrefix + "2", "e/f/" + storage.TempPrefix + "3"} {
		full := filepath.Join(srv.root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(srv.root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	all := []string{storage.TempPrefix + "1", "d/" + storage.TempPrefix + "2", "e/f/" + storage.TempPrefix + "3"}
	if found, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true}); !slices.Equal(found, all) || err != nil {
		t.Fatalf("SweepTemp(DryRun) = %q, %v; want %q", found, err, all)
	}
	if !exists(filepath.Join(srv.root, "e", "f", storage.TempPrefix+"3")) {
		t.Fatal("a dry run removed a temporary file")
	}
	if found, err := s.SweepTemp(ctx, storage.SweepOptions{}); !slices.Equal(found, all) || err != nil {
		t.Fatalf("SweepTemp = %q, %v; want %q", found, err, all)
	}
	if exists(filepath.Join(srv.root, "e")) || !exists(filepath.Join(srv.root, "empty")) || !exists(filepath.Join(srv.root, "d", "a")) {
		t.Error("SweepTemp removed too little or too much")
	}
	// The directory cache forgot e/f: writing there works again.
	put(t, s, "e/f/new", "x")
}
