//go:build unix

package main

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// stallServer is a destination root behind a faultproxy: the YAML of the
// destination as the CLI reaches it (through the proxy), the store opened
// directly on the same root, and the environment the CLI needs.
type stallServer struct {
	proxy interface {
		Forwarded() int64
		Stall()
		Heal()
	}
	yaml  string
	store storage.Store
	env   []string
}

func stallSFTP(t *testing.T, l sftptest.Login) stallServer {
	opts := sftpOptions(l)
	st, err := sftp.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := faultproxy.New(t, net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	yaml := fmt.Sprintf(`    backend: sftp
    path: %s
    sftp: {host: 127.0.0.1, port: %d, user: %s, identity_file: %s, known_hosts_file: %s}
`, opts.Root, p.Port(), opts.User, opts.IdentityFile, sftptest.KnownHostsFor(t, opts.KnownHostsFile, p.Addr()))
	return stallServer{proxy: p, yaml: yaml, store: st}
}

// stallFTP is an FTP test server behind an ftptest.Proxy (the control and
// every data connection); the CLI finds the password in
// DISTRIBUTOR_FTP_PASSWORD.
func stallFTP(t *testing.T, server string) stallServer {
	l := ftptest.Real(t, server).FreshRoot(t)
	opts := ftpOptions(l)
	st, err := ftp.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p := l.Proxy(t)
	pl := p.Login()
	yaml := fmt.Sprintf(`    backend: ftp
    path: %s
    ftp: {host: %s, port: %d, user: %s, ca_file: %s, server_name: %s}
`, pl.Path, pl.Host, pl.Port, pl.User, pl.CAFile, pl.ServerName)
	return stallServer{proxy: p, yaml: yaml, store: st, env: []string{"DISTRIBUTOR_FTP_PASSWORD=" + l.Password}}
}

func stallS3(t *testing.T, srv *s3test.Server) stallServer {
	prefix := "stall/" + rand.Text()[:8]
	p := faultproxy.New(t, srv.Addr)
	yaml := fmt.Sprintf(`    backend: s3
    path: %s
    s3: {bucket: %s, region: %s, endpoint: "http://%s", path_style: true}
`, prefix, srv.Bucket, srv.Region, p.Addr())
	var env []string
	for k, v := range srv.Env {
		env = append(env, k+"="+v)
	}
	return stallServer{proxy: p, yaml: yaml, store: srv.Open(t, prefix), env: env}
}

// signalBound is what the spec promises: a signal ends a run within
// seconds (docs/operations.md says 5).
const signalBound = 5 * time.Second

// TestSignalDuringStalledUpload: SIGTERM while an upload is stalled (the
// server stopped reading in the middle of the transfer, the connection
// stays open) ends the process within the bound, with status 143, without
// waiting on the stalled connection: the root keeps the intent journal,
// and the next run (the network healed) recovers it and publishes.
func TestSignalDuringStalledUpload(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(t *testing.T) stallServer
	}{
		{"sftp-inprocess", func(t *testing.T) stallServer { return stallSFTP(t, sftptest.Start(t).Login()) }},
		{"sftp-sshd", func(t *testing.T) stallServer { return stallSFTP(t, sftptest.SSHD(t).FreshRoot(t)) }},
		{"s3-gofakes3", func(t *testing.T) stallServer { return stallS3(t, s3test.Start(t)) }},
		{"s3-versitygw", func(t *testing.T) stallServer { return stallS3(t, s3test.Versitygw(t)) }},
		{"ftp-vsftpd", func(t *testing.T) stallServer { return stallFTP(t, "vsftpd") }},
		{"ftp-pureftpd", func(t *testing.T) stallServer { return stallFTP(t, "pureftpd") }},
		{"ftp-proftpd", func(t *testing.T) stallServer { return stallFTP(t, "proftpd") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := c.open(t)
			dir := t.TempDir()
			writeBigBundle(t, filepath.Join(dir, "b"), 4, 8<<20)
			cfg := filepath.Join(dir, "distributor.yaml")
			conf := "pipelines:\n  - {id: p, source: b, destinations: [site]}\ndestinations:\n  - id: site\n" + srv.yaml
			if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func() *proc {
				cmd := command(t, "run", "--config", cfg, "--lock-timeout", "30s")
				cmd.Env = append(cmd.Env, srv.env...)
				return startProc(t, cmd)
			}
			p := run()
			// Stall once the upload is well under way (the lock, journal and
			// catalog reads are a few KiB).
			deadline := time.Now().Add(testtime.Scale(time.Minute))
			for srv.proxy.Forwarded() < 4<<20 {
				if p.exited() {
					t.Fatalf("the run ended before the stall:\n%s", p.output())
				}
				if time.Now().After(deadline) {
					t.Fatalf("the upload did not start within a minute:\n%s", p.kill())
				}
				time.Sleep(2 * time.Millisecond)
			}
			srv.proxy.Stall()
			time.Sleep(300 * time.Millisecond) // the writer is now blocked on the stalled connection
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			code := p.wait(t, "the run after SIGTERM", testtime.Scale(signalBound))
			took := time.Since(sent)
			out := p.output()
			t.Logf("the run ended %v after SIGTERM (status %d):\n%s", took.Round(time.Millisecond), code, out)
			if code != 143 {
				t.Errorf("exit status %d, want 143 (stopped by SIGTERM)", code)
			}
			if !strings.Contains(out, "interrupted by SIGTERM") {
				t.Errorf("the output does not say that SIGTERM stopped the run")
			}
			// Nothing was committed: the root keeps the journal for the next
			// writer (the stalled upload's bytes never made a file).
			srv.proxy.Heal()
			if !intentPending(t, t.Context(), srv.store) {
				t.Errorf("the root keeps no journal after the interrupted run (neither %s nor an intent in its lock record)", journal.Name)
			}

			next := run()
			if code := next.wait(t, "the next run", testtime.Scale(time.Minute)); code != 0 {
				t.Fatalf("the next run: status %d\n%s", code, next.output())
			}
			if !wrappedContains(next.output(), "recovered the root from a dead run's intent journal first") {
				t.Errorf("the next run does not say it recovered the root:\n%s", next.output())
			}
			c := auditCatalog(t, srv.store, false)
			if len(c.Outputs) != 4 {
				t.Errorf("%d records after the next run, want the bundle's 4", len(c.Outputs))
			}
			if temps, err := srv.store.SweepTemp(t.Context(), storage.SweepOptions{DryRun: true}); err != nil || len(temps) > 0 {
				t.Errorf("temporary objects left after the next run: %q, %v", temps, err)
			}
		})
	}
}
