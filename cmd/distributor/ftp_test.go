//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
	"github.com/distributor-dev/distributor/internal/txn"
)

// TestKillAtRandomMomentsFTP: on each FTP server, runs alternating between
// two bundles (replacement: deletes, rewrites, new files) are killed with
// SIGKILL at random moments. After every kill, recovering the root leaves
// a truthful catalog that records every file; the last run, not killed,
// converges to its bundle and leaves no temporary file. A lock left half
// made (its guard directory without its record) is waited out after the
// short lease the runs use.
func TestKillAtRandomMomentsFTP(t *testing.T) {
	for _, server := range ftptest.Servers {
		t.Run(server, func(t *testing.T) {
			be := ftpBackend(server)(t)
			dir := t.TempDir()
			a, b := map[string]string{}, map[string]string{}
			for i := range 60 {
				p := fmt.Sprintf("d%d/f%02d.txt", i%4, i)
				a[p] = fmt.Sprintf("A %d %s", i, strings.Repeat("x", 4<<10))
				if i%3 != 0 {
					b[p] = fmt.Sprintf("B %d %s", i, strings.Repeat("y", 4<<10))
				}
			}
			b["new.md"] = "# New\n"
			writeBundle(t, filepath.Join(dir, "a"), "bundle.a", a)
			writeBundle(t, filepath.Join(dir, "b"), "bundle.b", b)
			cfg := filepath.Join(dir, "distributor.yaml")
			conf := "pipelines:\n  - {id: p, source: a, destinations: [site]}\ndestinations:\n  - id: site\n    workflow: replacement\n" + be.yaml
			if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(src string) *proc {
				return startProc(t, command(t, "run", "--config", cfg, "--pipeline", "p", "--source", filepath.Join(dir, src),
					"--lock-timeout", "30s", "--lock-lease", "2s", "--lock-skew-allowance", "1s"))
			}
			rng := rand.New(rand.NewPCG(3, uint64(len(server)))) // a fixed sequence of kill delays
			killed := 0
			for i := range 6 {
				p := run([]string{"a", "b"}[i%2])
				time.Sleep(time.Duration(rng.IntN(700)) * time.Millisecond)
				if p.exited() {
					if code := p.cmd.ProcessState.ExitCode(); code != 0 {
						t.Fatalf("run %d failed on its own (exit %d):\n%s", i, code, p.output())
					}
				} else {
					p.cmd.Process.Signal(syscall.SIGKILL)
					p.wait(t, "the killed run", time.Minute)
					killed++
				}
				recoverAndAudit(t, be.store)
			}
			last := run("b")
			if code := last.wait(t, "the last run", 2*time.Minute); code != 0 {
				t.Fatalf("the last run: exit %d\n%s", code, last.output())
			}
			if c := auditCatalog(t, be.store, false); len(c.Outputs) != len(b) { // new.md is published as new.html
				t.Errorf("the last run left %d records, want %d", len(c.Outputs), len(b))
			}
			if temps, err := be.store.SweepTemp(t.Context(), storage.SweepOptions{DryRun: true}); err != nil || len(temps) > 0 {
				t.Errorf("temporary files left after the last run: %q (%v)", temps, err)
			}
			t.Logf("%s: %d of 6 runs killed at random moments; every state recovered truthful", server, killed)
		})
	}
}

// recoverAndAudit recovers a dead run's intent at the root and sweeps, as
// its next writer would (txn.Begin: the whole tree after a recovery, else
// the root directory), and checks that the catalog then tells the truth.
func recoverAndAudit(t *testing.T, st storage.Store) {
	t.Helper()
	ctx := context.Background()
	takeOverIntent(t, st)
	rec, err := txn.Recover(ctx, st, nil, time.Now())
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	scope := storage.SweepOptions{Dirs: []string{""}}
	if rec != nil {
		scope.Dirs = nil
	}
	if _, err := st.SweepTemp(ctx, scope); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	auditCatalog(t, st, true)
}

// TestFTPServerThatCannotReplaceIsRefused: a server that does not replace
// a file by a rename (Pure-FTPd -G, ProFTPD AllowOverwrite off) is refused
// before anything is written, with the setting named.
func TestFTPServerThatCannotReplaceIsRefused(t *testing.T) {
	for server, setting := range map[string]string{"pureftpd-norename": "--norename", "proftpd-nooverwrite": "AllowOverwrite on"} {
		t.Run(server, func(t *testing.T) {
			l := ftptest.Real(t, server).FreshRoot(t)
			t.Setenv("DISTRIBUTOR_FTP_PASSWORD", l.Password)
			dir := t.TempDir()
			writeBundle(t, filepath.Join(dir, "a"), "bundle.a", map[string]string{"index.md": "# A\n", "data.csv": "a,b\n"})
			conf := fmt.Sprintf("pipelines:\n  - {id: p, source: a, destinations: [site]}\ndestinations:\n  - id: site\n"+
				"    backend: ftp\n    path: %s\n    ftp: {host: %s, port: %d, user: %s, ca_file: %s}\n", l.Path, l.Host, l.Port, l.User, l.CAFile)
			cfg := filepath.Join(dir, "distributor.yaml")
			if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := command(t, "run", "--config", cfg).CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("%v, want exit status 1\n%s", err, out)
			}
			if !wrappedContains(string(out), setting) || !wrappedContains(string(out), "nothing was written") {
				t.Errorf("the refusal does not name %q and say nothing was written:\n%s", setting, out)
			}
			var left []string
			filepath.WalkDir(l.Dir(), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					left = append(left, p)
				}
				return nil
			})
			if len(left) > 0 {
				t.Errorf("files left on the server: %q", left)
			}
			if _, err := ftp.New(t.Context(), ftpOptions(l)); err != nil {
				t.Errorf("the store itself opens (reads need no proof): %v", err)
			}
		})
	}
}
