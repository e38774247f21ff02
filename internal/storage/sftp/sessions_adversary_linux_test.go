package sftp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/retry"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// The adversary's cases of the extra SFTP sessions a connection to OpenSSH
// opens for overlapping writes (conn.session), against the real sshd of
// scripts/test-servers (sessions are opened on OpenSSH only), whose root
// and session processes are on this machine. TestWriteSessions,
// TestConcurrentPutsOverSessions and TestStallWhileASessionOpens have the
// sessions, their writes and a stall while one opens.

// gate is a write's source that stops once after at bytes, saying so on
// paused, until resume is closed; it seeks as a bundle file's reader does,
// so that the retry wrapper can replay it.
type gate struct {
	*bytes.Reader
	at      int64
	paused  chan struct{}
	resume  chan struct{}
	once    sync.Once
	rewinds int
}

func newGate(data []byte, at int64) *gate {
	return &gate{Reader: bytes.NewReader(data), at: at, paused: make(chan struct{}), resume: make(chan struct{})}
}

func (g *gate) Read(p []byte) (int, error) {
	done := g.Size() - int64(g.Len())
	if done >= g.at {
		g.once.Do(func() { close(g.paused); <-g.resume })
	} else if left := g.at - done; int64(len(p)) > left {
		p = p[:left]
	}
	return g.Reader.Read(p)
}

func (g *gate) Seek(off int64, whence int) (int64, error) {
	if off == 0 && whence == io.SeekStart {
		g.rewinds++
	}
	return g.Reader.Seek(off, whence)
}

// waitPaused waits for g to pause, or for the write reading it to end
// (errc), which fails the test.
func waitPaused(t *testing.T, g *gate, what string, errc <-chan error) {
	t.Helper()
	select {
	case <-g.paused:
	case err := <-errc:
		t.Fatalf("%s ended before it paused: %v", what, err)
	case <-time.After(storagetest.HangBound):
		t.Fatalf("%s did not start", what)
	}
}

// sessionHolding returns the pid of the server process (an sshd session
// child: one per SFTP session) that has a temporary file open in the
// server directory dir.
func sessionHolding(t *testing.T, dir string) int {
	t.Helper()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			if l, _ := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); filepath.Dir(l) == dir && storage.IsTemp(l) {
				pids = append(pids, pid)
				break
			}
		}
	}
	if len(pids) != 1 {
		t.Fatalf("%d processes hold a temporary file in %s open (%v), want the one session serving its write", len(pids), dir, pids)
	}
	return pids[0]
}

// tempsOnDisk lists the temporary files below the server directory root.
func tempsOnDisk(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && storage.IsTemp(p) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// TestExtraSessionKilledMidWrite: the server ends an extra session (its
// process killed) while two staged writes are mid-upload, one on the
// first session and one on the extra one. The extra session's write fails
// with a transient error and its temporary file is removed (on a fresh
// connection); the connection is given up, so the first session's write
// fails the same way; the retry wrapper (as a run has it) redoes both on a
// new connection, both land with their own bytes, and no temporary file is
// left but the two staged ones, which their commits rename.
func TestExtraSessionKilledMidWrite(t *testing.T) {
	s := open(t, sshdOptions(t))
	put(t, s, "warm", "up") // the connection, and the root
	var mu sync.Mutex
	var failed []string
	rs := retry.New(s, retry.Options{
		Sleep: func(context.Context, time.Duration) error { return nil },
		OnRetry: func(op, p string, attempt int, err error) {
			mu.Lock()
			defer mu.Unlock()
			failed = append(failed, fmt.Sprintf("%s %s #%d: %v", op, p, attempt, err))
			if !s.IsTransient(err) {
				t.Errorf("%s %s: a retried error the store does not call transient: %v", op, p, err)
			}
		},
	})
	const size = 4 << 20
	one, two := bytes.Repeat([]byte("one\n"), size/4), bytes.Repeat([]byte("two\n"), size/4)
	g1, g2 := newGate(one, 1<<20), newGate(two, 1<<20)
	stage := func(p string, g *gate, errc chan<- error, staged *storage.Staged) {
		sg, err := rs.Stage(context.Background(), p, g, size, storage.PutOptions{})
		*staged = sg
		errc <- err
	}
	var st1, st2 storage.Staged
	errc1, errc2 := make(chan error, 1), make(chan error, 1)
	go stage("a/one.bin", g1, errc1, &st1)
	waitPaused(t, g1, "the first write", errc1)
	go stage("b/two.bin", g2, errc2, &st2)
	waitPaused(t, g2, "the second write", errc2)
	c := storeConn(s)
	c.mu.Lock()
	sessions, busy := len(c.sessions), fmt.Sprint(c.busy)
	c.mu.Unlock()
	if sessions != 2 || busy != "[1 1]" {
		t.Fatalf("two overlapping writes: %d sessions, busy %s; want 2, [1 1]", sessions, busy)
	}

	victim := sessionHolding(t, filepath.Join(s.root, "b"))
	if first := sessionHolding(t, filepath.Join(s.root, "a")); first == victim {
		t.Fatalf("both writes are served by process %d", victim)
	}
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(storagetest.HangBound); !c.dead.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the end of a session did not mark the connection dead")
		}
	}
	close(g2.resume)
	if err := storagetest.Bounded(t, "the killed session's write", func() error { return <-errc2 }); err != nil {
		t.Fatalf("the killed session's write, retried: %v", err)
	}
	close(g1.resume)
	if err := storagetest.Bounded(t, "the first session's write", func() error { return <-errc1 }); err != nil {
		t.Fatalf("the first session's write, retried: %v", err)
	}
	t.Logf("retried: %q", failed)
	if g2.rewinds == 0 {
		t.Error("the killed session's write did not fail (its source was never rewound)")
	}
	if storeConn(s) == c {
		t.Error("the store kept the connection whose session the server ended")
	}
	if tmp := tempsOnDisk(t, s.root); len(tmp) != 2 {
		t.Errorf("temporary files before the commits: %q, want the two staged ones", tmp)
	}
	for _, g := range []storage.Staged{st1, st2} {
		if err := g.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for p, want := range map[string][]byte{"a/one.bin": one, "b/two.bin": two} {
		if got, err := os.ReadFile(filepath.Join(s.root, p)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes (%v), want its own %d", p, len(got), err, len(want))
		}
	}
	if tmp := tempsOnDisk(t, s.root); len(tmp) > 0 {
		t.Errorf("temporary files left: %q", tmp)
	}
}

// TestStallWithSessionsMidWrite: the network stalls (a partition: the TCP
// connection stays open, nothing flows) while three writes are mid-upload
// on three sessions of one connection. Every one fails within the bound
// (keepalive, then the dial timeout of its cleanup's fresh connection),
// none publishes; once the network heals, a sweep (a run's cleanup)
// leaves no temporary file, and the store writes again.
func TestStallWithSessionsMidWrite(t *testing.T) {
	opts, p := viaProxy(t, sshdOptions(t))
	s := open(t, opts)
	put(t, s, "warm", "up")
	const size = 4 << 20
	names := []string{"a/f.bin", "b/f.bin", "c/f.bin"}
	var gates []*gate
	var errcs []chan error
	for _, name := range names {
		g, errc := newGate(bytes.Repeat([]byte(name[:1]), size), 1<<20), make(chan error, 1)
		go func() {
			_, err := s.Put(context.Background(), name, g, size, storage.PutOptions{})
			errc <- err
		}()
		waitPaused(t, g, name, errc)
		gates, errcs = append(gates, g), append(errcs, errc)
	}
	c := storeConn(s)
	c.mu.Lock()
	sessions, busy := len(c.sessions), fmt.Sprint(c.busy)
	c.mu.Unlock()
	if sessions != 3 || busy != "[1 1 1]" {
		t.Fatalf("three overlapping writes: %d sessions, busy %s; want 3, [1 1 1]", sessions, busy)
	}
	p.Stall()
	for _, g := range gates {
		close(g.resume)
	}
	err := storagetest.Bounded(t, "the stalled writes", func() error {
		var errs []error
		for i, errc := range errcs {
			if err := <-errc; err == nil {
				errs = append(errs, fmt.Errorf("%s succeeded through a stall", names[i]))
			} else if !s.IsTransient(err) {
				errs = append(errs, fmt.Errorf("%s: not transient (a run would not retry it): %w", names[i], err))
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		t.Error(err)
	}
	if !c.dead.Load() {
		t.Error("the stalled connection is still marked alive")
	}
	p.Heal()
	left := tempsOnDisk(t, s.root)
	swept, err := s.SweepTemp(t.Context(), storage.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d temporary file(s) left by the failed writes' cleanups, swept %q", len(left), swept)
	if tmp := tempsOnDisk(t, s.root); len(tmp) > 0 {
		t.Errorf("temporary files after the sweep: %q", tmp)
	}
	for _, name := range names {
		if _, err := os.Lstat(filepath.Join(s.root, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was published by a write that failed (%v)", name, err)
		}
	}
	put(t, s, "after", strings.Repeat("x", 3))
}
