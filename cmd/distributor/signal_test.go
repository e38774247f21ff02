//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// lockGets wraps a gofakes3 server to count the GETs of the lock object:
// a run reads the lock after its exclusive create found it taken, then
// sleeps (half a second) before trying again, so the first such GET
// answered means a run is waiting for the lock.
type lockGets struct {
	mu   sync.Mutex
	n    int
	seen chan struct{} // closed once the first GET is answered
}

func (l *lockGets) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/"+lock.Name) {
			l.mu.Lock()
			if l.n++; l.n == 1 {
				close(l.seen)
			}
			l.mu.Unlock()
		}
	})
}

// TestFirstSignalCancelsRun: a run waiting (up to a minute) for a root lock
// held by a live process stops within seconds of one SIGTERM: it exits by
// itself (the signal does not kill it), with the status of a run stopped
// by SIGTERM (143), naming the cancellation, and leaves the holder's lock
// alone.
func TestFirstSignalCancelsRun(t *testing.T) {
	gets := &lockGets{seen: make(chan struct{})}
	srv := s3test.Start(t, s3test.Middleware(gets.wrap))
	st := srv.Open(t, "site")

	// The holder is this test process: same host, a live pid.
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	record, err := json.Marshal(lock.Info{ID: "signal-test-holder", Host: host, PID: os.Getpid(), Command: "run",
		Acquired: now, ExpiresAt: now.Add(time.Hour), LeaseMS: time.Hour.Milliseconds()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.PutIf(t.Context(), st, lock.Name, record, ""); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	writeBundle(t, filepath.Join(dir, "b"), "b.one", map[string]string{"a.txt": "a"})
	cfg := filepath.Join(dir, "distributor.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `pipelines:
  - {id: p, source: b, destinations: [site]}
destinations:
  - id: site
    backend: s3
    path: site
    s3: {bucket: reports, region: us-east-1, endpoint: %q, path_style: true}
`, srv.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := command(t, "run", "--config", cfg, "--lock-timeout", "1m")
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v) // the last value of a name wins
	}
	p := startProc(t, cmd)
	select {
	case <-gets.seen:
	case <-p.done:
		t.Fatalf("the run ended before waiting for the lock:\n%s", p.output())
	case <-time.After(time.Minute):
		t.Fatalf("the run did not read the lock within a minute:\n%s", p.output())
	}
	// Into the pause between two attempts (the signal would cancel an
	// attempt's request just as well, with another message).
	time.Sleep(100 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	p.wait(t, "the run after SIGTERM", 10*time.Second)
	took := time.Since(sent)
	out := p.output()
	t.Logf("the run ended %v after SIGTERM:\n%s", took.Round(time.Millisecond), out)
	ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		t.Fatalf("SIGTERM killed the run (%v) instead of cancelling it", ws.Signal())
	}
	if code := ws.ExitStatus(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d, want %d (stopped by SIGTERM)", code, 128+int(syscall.SIGTERM))
	}
	// The destination's error names the signal as the cause of the
	// cancellation, and so does the closing line.
	for _, want := range []string{"FAILED: waiting for the lock", "): interrupted by SIGTERM", "distributor: interrupted by SIGTERM: stopped"} {
		if !wrappedContains(out, want) {
			t.Errorf("the output does not say %q", want)
		}
	}
	if !strings.Contains(out, "waiting for the lock") && !strings.Contains(out, lock.Name) {
		t.Errorf("the output does not say that the run was waiting for the lock")
	}
	if got, _, err := st.Get(t.Context(), lock.Name); err != nil || !bytes.Equal(got, record) {
		t.Errorf("the holder's lock after the cancelled wait: %q, %v", got, err)
	}
}

// TestSecondSignalKills: once a first signal has cancelled the run, a
// second one ends the process at once, even when the run is stuck in
// something that does not watch its context. Here the run reads its
// configuration from a named pipe whose writer never writes (a read no
// context can interrupt): the first SIGTERM leaves it blocked, the second
// kills it.
func TestSecondSignalKills(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "distributor.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	p := startProc(t, command(t, "run", "--config", fifo))
	// Opening the pipe for writing without blocking succeeds once the run
	// has it open for reading: it is then past its signal setup, in the
	// configuration's read, which waits for bytes that never come.
	var w *os.File
	deadline := time.Now().Add(time.Minute)
	for {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w = f
			break
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
		select {
		case <-p.done:
			t.Fatalf("the run ended before reading its configuration:\n%s", p.output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not open its configuration within a minute:\n%s", p.output())
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer w.Close()

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The first signal cancels the run's context, which this read ignores:
	// the process goes on. (A second signal sent within microseconds of the
	// first could still reach the first's handler; a second later it
	// cannot.)
	select {
	case <-p.done:
		t.Fatalf("the first SIGTERM ended a run stuck in a read that ignores its context (status %v): the premise of this test fails\n%s",
			p.cmd.ProcessState, p.output())
	case <-time.After(time.Second):
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	p.wait(t, "the run after the second SIGTERM", 10*time.Second)
	took := time.Since(sent)
	t.Logf("the run ended %v after the second SIGTERM", took.Round(time.Millisecond))
	ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("after the second SIGTERM: %v, want the process killed by SIGTERM\n%s", p.cmd.ProcessState, p.output())
	}
}
