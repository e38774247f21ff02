package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	mrand "math/rand/v2"
	"net"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// The lease and skew allowance of both writers in the partition tests: a
// waiter takes a silent lock over after 1.5s, and a holder stops changing
// the root 750ms after its last successful renewal.
// All three grow with the test-wide time factor.
var (
	netLease     = testtime.Scale(time.Second)
	netAllowance = testtime.Scale(500 * time.Millisecond)
	// partitionedEnd bounds how long after the partition began the
	// partitioned writer may take to give up by itself.
	partitionedEnd = testtime.Scale(20 * time.Second)
)

// netServer is a destination root on a server reached over TCP on the
// loopback interface, for tests that put a faultproxy between a writer and
// the server.
type netServer struct {
	// addr is the server's host:port, which a proxy forwards to.
	addr string
	// dest returns the destination's backend fields (backend, path and the
	// backend block, indented for a list item) for a client that connects
	// to host:port via: the server itself or a proxy in front of it.
	dest func(t *testing.T, via string) string
	// store is the root opened directly, to look behind the writers' backs.
	store storage.Store
	// dir is the root on this machine's disk ("" for S3).
	dir string
	// getenv is the environment the writers get (S3 credentials).
	getenv func(string) string
}

// snapshot maps everything at the root to its bytes: on disk for SFTP
// (temporary and reserved files included), through the store for S3.
func (s netServer) snapshot(t *testing.T) map[string]string {
	t.Helper()
	if s.dir != "" {
		return storagetest.DirSnapshot(t, s.dir)
	}
	return storagetest.Snapshot(t, s.store)
}

func sftpNetServer(t *testing.T, opts sftp.Options) netServer {
	t.Helper()
	st, err := sftp.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return netServer{
		addr: net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)),
		dest: func(t *testing.T, via string) string {
			host, port, err := net.SplitHostPort(via)
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf(`    backend: sftp
    path: %s
    sftp:
      host: %s
      port: %s
      user: %s
      identity_file: %s
      known_hosts_file: %s
`, opts.Root, host, port, opts.User, opts.IdentityFile, sftptest.KnownHostsFor(t, opts.KnownHostsFile, via))
		},
		store:  st,
		dir:    opts.Root,
		getenv: func(string) string { return "" },
	}
}

// inProcessSFTPServer is the in-process SFTP server (the real file system).
func inProcessSFTPServer(t *testing.T) netServer {
	return sftpNetServer(t, sftpOptions(sftptest.Start(t).Login()))
}

// sshdServer is OpenSSH's sshd of scripts/test-servers (skipped when it is
// not running, failed under CI=true), with a fresh root below its root.
func sshdServer(t *testing.T) netServer {
	return sftpNetServer(t, sftpOptions(sftptest.SSHD(t).FreshRoot(t)))
}

// s3NetServer is the root prefix on an S3 server.
func s3NetServer(t *testing.T, srv *s3test.Server, prefix string) netServer {
	t.Helper()
	scheme, _, _ := strings.Cut(srv.URL, "://")
	return netServer{
		addr: srv.Addr,
		dest: func(t *testing.T, via string) string {
			return fmt.Sprintf(`    backend: s3
    path: %s
    s3:
      bucket: %s
      region: %s
      endpoint: %s://%s
      path_style: true
`, prefix, srv.Bucket, srv.Region, scheme, via)
		},
		store:  srv.Open(t, prefix),
		getenv: srv.Getenv,
	}
}

// gofakes3Server is an in-process S3 server (gofakes3 over plain HTTP).
func gofakes3Server(t *testing.T) netServer {
	return s3NetServer(t, s3test.Start(t), "site")
}

// versitygwServer is the versitygw S3 server of scripts/test-servers
// (skipped when it is not running, failed under CI=true), with a fresh
// prefix.
func versitygwServer(t *testing.T) netServer {
	return s3NetServer(t, s3test.Versitygw(t), "fencing/"+rand.Text()[:10])
}

// netConfig writes and loads a configuration whose pipeline mine publishes
// the bundle directory mine (replacement) to the destination site.
func netConfig(t *testing.T, dir, name, dest string) *config.Config {
	t.Helper()
	return writeConfig(t, dir, name, "pipelines:\n  - {id: mine, source: mine, destinations: [site]}\n"+
		"destinations:\n  - id: site\n    workflow: replacement\n"+dest)
}

// netApp is a writer with the tests' short lease.
func netApp(f *fixture, srv netServer) *App {
	a := f.app(nil)
	a.Getenv = srv.getenv
	a.LockLease, a.LockSkewAllowance = netLease, netAllowance
	return a
}

// runNet runs pipeline mine from the bundle directory source ("" for the
// configured one) and returns its destination's result. It may run on any
// goroutine.
func runNet(ctx context.Context, a *App, cfg *config.Config, source string, jobs int) (*report.Destination, error) {
	rep, err := a.Run(ctx, cfg, RunOptions{Pipelines: []string{"mine"}, Source: source, Jobs: jobs})
	if err != nil {
		return nil, err
	}
	p := rep.Pipelines[0]
	if p.Error != nil {
		return nil, fmt.Errorf("pipeline error: %s", *p.Error)
	}
	return &p.Destinations[0], nil
}

// putHook is a store that calls hook before its at-th Put or Stage
// (outputs are the only objects the engine writes with them) and counts
// them.
type putHook struct {
	storage.Store
	at   int
	hook func()

	mu        sync.Mutex
	started   int
	succeeded int
}

// Put implements storage.Store: an output write (not a conditional one)
// is counted.
func (h *putHook) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion {
		return h.Store.Put(ctx, p, r, size, opts)
	}
	return "", h.put(func() error { _, err := h.Store.Put(ctx, p, r, size, opts); return err })
}

// Stage implements storage.Store: staging is the upload, counted as a Put.
func (h *putHook) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	var sg storage.Staged
	err := h.put(func() (err error) { sg, err = h.Store.Stage(ctx, p, r, size, opts); return err })
	return sg, err
}

// Unwrap lets retry.Count find the retrying store below the hook.
func (h *putHook) Unwrap() storage.Store { return h.Store }

func (h *putHook) put(write func() error) error {
	h.mu.Lock()
	h.started++
	fire := h.started == h.at && h.hook != nil
	h.mu.Unlock()
	if fire {
		h.hook()
	}
	err := write()
	if err == nil {
		h.mu.Lock()
		h.succeeded++
		h.mu.Unlock()
	}
	return err
}

func (h *putHook) counts() (started, succeeded int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started, h.succeeded
}

// logBuffer is a bytes.Buffer safe for concurrent writers (a log sink).
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// writerPackages name the code of a writer in goroutine stacks (the store
// adapters' own package, not their test servers).
var writerPackages = []string{"distributor/internal/txn.", "distributor/internal/lock.",
	"distributor/internal/storage/sftp.", "distributor/internal/storage/s3."}

// goroutinesIn returns the stacks of the goroutines running code of the
// given packages (for a report on a writer that did not end).
func goroutinesIn(pkgs ...string) string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, p := range pkgs {
			if strings.Contains(g, p) {
				out = append(out, g)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}

// tempFilesBelow lists the temporary files below a directory on disk.
func tempFilesBelow(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), storage.TempPrefix) {
			rel, _ := filepath.Rel(dir, p)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	sort.Strings(found)
	return found
}

// wantPublished checks that the root holds exactly files' bytes at their
// paths, and that the catalog records exactly those paths.
func wantPublished(t *testing.T, st storage.Store, c *catalog.Catalog, files map[string]string) {
	t.Helper()
	bad := 0
	for p, want := range files {
		data, _, err := st.Get(context.Background(), p)
		if err != nil || string(data) != want {
			if bad++; bad <= 5 {
				t.Errorf("%s: %v, %d bytes that are not the last writer's", p, err, len(data))
			}
		}
	}
	if bad > 5 {
		t.Errorf("... %d paths in all do not hold the last writer's bytes", bad)
	}
	if len(c.Outputs) != len(files) {
		t.Errorf("the catalog records %d outputs, want %d", len(c.Outputs), len(files))
	}
	for _, o := range c.Outputs {
		if _, ok := files[o.Path]; !ok {
			t.Errorf("the catalog records %s, which the last bundle does not publish", o.Path)
		}
	}
}

// lostLock reports whether a failed run's error says it lost its lock or
// could not renew it.
func lostLock(msg string) bool {
	return strings.Contains(msg, lock.ErrLeaseLapsed.Error()) || strings.Contains(msg, lock.ErrLost.Error())
}

// TestPartitionLongerThanLeaseSFTP: writer A publishes through a proxy
// that partitions it from the SFTP server (after its journal and ten
// outputs are written) for longer than its lease. Writer B, connected
// directly, waits out A's lease plus the allowance, takes the lock over,
// recovers A's journal and commits. A must give up by itself, report that
// it lost its lock, and change nothing once B committed: B's outputs stay
// intact, byte for byte, after A returned and the partition healed.
func TestPartitionLongerThanLeaseSFTP(t *testing.T) {
	t.Run("inprocess", func(t *testing.T) { partitionScenario(t, inProcessSFTPServer(t)) })
	t.Run("sshd", func(t *testing.T) { partitionScenario(t, sshdServer(t)) })
}

// TestPartitionLongerThanLeaseS3 is the partition scenario on S3: A's
// requests go through the stalled proxy and must be cancelled through
// their context once A's fence lapses.
func TestPartitionLongerThanLeaseS3(t *testing.T) {
	t.Run("gofakes3", func(t *testing.T) { partitionScenario(t, gofakes3Server(t)) })
	t.Run("versitygw", func(t *testing.T) { partitionScenario(t, versitygwServer(t)) })
}

// partitionFiles is a bundle of 100 text files in four directories whose
// bytes name the version.
func partitionFiles(version string) map[string]string {
	m := map[string]string{}
	for i := range 100 {
		m[fmt.Sprintf("part%d/f%03d.txt", i%4, i)] = fmt.Sprintf("%s %03d %s\n", version, i, strings.Repeat(version+" ", 300))
	}
	return m
}

func partitionScenario(t *testing.T, srv netServer) {
	p := newPartitionRun(t, srv)
	stallAt, aDone := p.startPartitionedA(t)
	bAt, afterB := p.takeOverWithB(t, stallAt)
	p.aEndsByItself(t, stallAt, bAt, aDone)
	p.nothingChangedAfterB(t, afterB)
}

// partitionRun is partitionScenario on one server: the fixture with
// bundles v0, v1 (A's) and v2 (B's), the proxy A goes through, both
// configurations, and the root as the setup run left it.
type partitionRun struct {
	srv                 netServer
	f                   *fixture
	v2                  map[string]string
	proxy               *faultproxy.Proxy
	direct, partitioned *config.Config
	r0                  *RootState
}

// partitionResult is how writer A's run ended, and when.
type partitionResult struct {
	d   *report.Destination
	err error
	at  time.Time
}

// newPartitionRun publishes v0 first, so that A's writes replace files
// (recovery rolls A's completed ones forward before B replaces them
// again).
func newPartitionRun(t *testing.T, srv netServer) *partitionRun {
	ctx := t.Context()
	f := newFixture(t, "replacement")
	v2 := partitionFiles("v2")
	f.bundle("mine", "mine.v0", partitionFiles("v0"))
	f.bundle("v1", "mine.v1", partitionFiles("v1"))
	f.bundle("v2", "mine.v2", v2)
	proxy := faultproxy.New(t, srv.addr)
	direct := netConfig(t, f.dir, "direct.yaml", srv.dest(t, srv.addr))
	partitioned := netConfig(t, f.dir, "partitioned.yaml", srv.dest(t, proxy.Addr()))

	if d, err := runNet(ctx, netApp(f, srv), direct, "", 0); err != nil || d.Status != report.StatusOK {
		t.Fatalf("setup run: %v %+v", err, d)
	}
	r0, err := ReadRoot(ctx, srv.store)
	if err != nil {
		t.Fatal(err)
	}
	return &partitionRun{srv: srv, f: f, v2: v2, proxy: proxy, direct: direct, partitioned: partitioned, r0: r0}
}

// startPartitionedA starts A: jobs 1, through the proxy, which partitions
// it just before its 11th output: its journal exists and ten outputs are
// written. It returns when the partition began, and where A's result
// comes.
func (p *partitionRun) startPartitionedA(t *testing.T) (time.Time, chan partitionResult) {
	f, srv, proxy, partitioned := p.f, p.srv, p.proxy, p.partitioned
	stalled := make(chan time.Time, 1)
	a := netApp(f, srv)
	a.Open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
		st, err := a.DefaultOpenStore(ctx, d, root)
		if err != nil {
			return nil, err
		}
		return &putHook{Store: st, at: 11, hook: func() {
			proxy.Stall()
			stalled <- time.Now()
		}}, nil
	}
	aDone := make(chan partitionResult, 1)
	aFinished := make(chan struct{})
	go func() {
		defer close(aFinished)
		d, err := runNet(context.Background(), a, partitioned, filepath.Join(f.dir, "v1"), 1)
		aDone <- partitionResult{d, err, time.Now()}
	}()
	// Whatever happens below, A is released and waited for before the
	// servers stop.
	t.Cleanup(func() {
		proxy.Heal()
		select {
		case <-aFinished:
		case <-time.After(30 * time.Second):
			t.Errorf("writer A still runs 30s after the partition healed:\n%s", goroutinesIn(writerPackages...))
		}
	})
	var stallAt time.Time
	select {
	case stallAt = <-stalled:
	case r := <-aDone:
		t.Fatalf("A ended before the partition: %v %+v", r.err, r.d)
	case <-time.After(10 * time.Second):
		t.Fatal("A did not reach its 11th output within 10s")
	}
	if !intentPending(t, srv.store) {
		t.Fatalf("A's journal is not at the root when the partition begins (neither %s nor an intent in %s)", journal.Name, lock.Name)
	}
	return stallAt, aDone
}

// takeOverWithB runs B: direct, it waits for the lock up to 20s, and must
// take over after A's lease plus the allowance and recover A's journal.
// It returns when B committed, and the root then.
func (p *partitionRun) takeOverWithB(t *testing.T, stallAt time.Time) (time.Time, map[string]string) {
	var logs logBuffer
	b := netApp(p.f, p.srv)
	b.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	b.LockTimeout = 20 * time.Second
	d, err := runNet(t.Context(), b, p.direct, filepath.Join(p.f.dir, "v2"), 0)
	bAt := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != report.StatusOK {
		t.Fatalf("B: %s %s", d.Status, str(d.Error))
	}
	if took := bAt.Sub(stallAt); took < netLease+netAllowance {
		t.Errorf("B committed %s after the partition began: it cannot have watched A's lock for lease + allowance (%s)",
			took, netLease+netAllowance)
	}
	if !strings.Contains(logs.String(), "recovered a root left by a dead run") {
		t.Errorf("B did not recover A's journal; its log:\n%s", logs.String())
	}
	return bAt, p.srv.snapshot(t)
}

// aEndsByItself: A must end by itself, partitioned, and say it lost its
// lock.
func (p *partitionRun) aEndsByItself(t *testing.T, stallAt, bAt time.Time, aDone chan partitionResult) {
	var ar partitionResult
	select {
	case ar = <-aDone:
	case <-time.After(time.Until(stallAt.Add(partitionedEnd))):
		t.Errorf("A did not end by itself within %s of the partition; its goroutines:\n%s",
			partitionedEnd, goroutinesIn(writerPackages...))
		p.proxy.Heal()
		select {
		case ar = <-aDone:
		case <-time.After(30 * time.Second):
			t.Fatal("A did not end even after the partition healed")
		}
	}
	t.Logf("B committed %s after the partition began; A ended %s after it",
		bAt.Sub(stallAt).Round(time.Millisecond), ar.at.Sub(stallAt).Round(time.Millisecond))
	switch {
	case ar.err != nil:
		t.Errorf("A: %v", ar.err)
	case ar.d.Status != report.StatusFailed:
		t.Errorf("A: status %s, want failed", ar.d.Status)
	case ar.d.Error == nil || !lostLock(*ar.d.Error):
		t.Errorf("A's error does not say it lost its lock: %s", str(ar.d.Error))
	default:
		t.Logf("A: %s", *ar.d.Error)
	}
}

// nothingChangedAfterB: nothing changed since B's commit, even once the
// partition is over, and B's outputs are intact.
func (p *partitionRun) nothingChangedAfterB(t *testing.T, afterB map[string]string) {
	srv := p.srv
	p.proxy.Heal()
	if n := p.proxy.Active(); n != 0 {
		t.Errorf("%d connections through the proxy still open after A returned and the partition healed", n)
	}
	if after := srv.snapshot(t); !maps.Equal(afterB, after) {
		t.Errorf("the root changed after B committed:\n%s", diffSnapshot(afterB, after))
	}
	c := storeInvariants(t, srv.store, nil, p.r0.State.Catalog, nil)
	wantPublished(t, srv.store, c, p.v2)
}

func diffSnapshot(before, after map[string]string) string {
	var lines []string
	for k, v := range before {
		w, ok := after[k]
		switch {
		case !ok:
			lines = append(lines, "removed "+k)
		case w != v:
			lines = append(lines, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			lines = append(lines, "added "+k)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestDroppedConnectionLeavesNoTempFileSFTP: a run whose SSH connection is
// cut in the middle of its uploads (64 KiB files) fails; the next run of
// the same bundle, connected directly, succeeds, and then no temporary file
// is left anywhere below the root and the catalog is truthful, with no
// orphan. It also reports whether the failed run had already removed its
// temporary files.
//
// With the retry wrapper production opens (retrying), the same cuts heal
// within the retry budget: the run itself succeeds, reports its retries,
// and leaves no temporary file either.
func TestDroppedConnectionLeavesNoTempFileSFTP(t *testing.T) {
	t.Run("inprocess", func(t *testing.T) { droppedConnectionScenario(t, inProcessSFTPServer(t), false) })
	t.Run("sshd", func(t *testing.T) { droppedConnectionScenario(t, sshdServer(t), false) })
	t.Run("inprocess-retrying", func(t *testing.T) { droppedConnectionScenario(t, inProcessSFTPServer(t), true) })
	t.Run("sshd-retrying", func(t *testing.T) { droppedConnectionScenario(t, sshdServer(t), true) })
}

func droppedConnectionScenario(t *testing.T, srv netServer, retrying bool) {
	ctx := t.Context()
	const (
		nFiles   = 24
		fileSize = 64 << 10
		// cutAfter is about five files' worth of client->server bytes: the
		// handshake, lock and journal take a few KiB, so the cut falls in
		// the uploads, and a new connection (cleanup) gets as much again.
		cutAfter = 5*fileSize + fileSize/2
	)
	f := newFixture(t, "replacement")
	files := map[string]string{}
	rng := mrand.NewChaCha8([32]byte{7})
	for i := range nFiles {
		b := make([]byte, fileSize)
		rng.Read(b)
		files[fmt.Sprintf("blobs/%d/b%02d.bin", i%3, i)] = string(b)
	}
	f.bundle("mine", "mine.one", files)
	proxy := faultproxy.New(t, srv.addr)
	direct := netConfig(t, f.dir, "direct.yaml", srv.dest(t, srv.addr))
	cut := netConfig(t, f.dir, "cut.yaml", srv.dest(t, proxy.Addr()))
	proxy.CutAfter(cutAfter)

	a := f.app(nil)
	a.Getenv = srv.getenv
	counter := &putHook{}
	a.Open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
		open := a.DefaultOpenStore // wraps the store in retry.Store
		if !retrying {
			open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
				return OpenDestination(ctx, d, root, a.Getenv)
			}
		}
		st, err := open(ctx, d, root)
		if err != nil {
			return nil, err
		}
		counter.Store = st
		return counter, nil
	}
	start := time.Now()
	d, err := runNet(ctx, a, cut, "", 4)
	if err != nil {
		t.Fatal(err)
	}
	if retrying {
		if d.Status != report.StatusOK || d.Retries == 0 {
			t.Fatalf("a run whose connections were cut every %d bytes, with retries: %s after %d retries: %s",
				cutAfter, d.Status, d.Retries, str(d.Error))
		}
		t.Logf("healed by %d retries over %d connections in %s", d.Retries, proxy.Accepted(), time.Since(start).Round(time.Millisecond))
		if left := tempFilesBelow(t, srv.dir); len(left) > 0 {
			t.Errorf("temporary files left below the root: %v", left)
		}
		c := storeInvariants(t, srv.store, nil, &catalog.Catalog{}, nil)
		wantPublished(t, srv.store, c, files)
		return
	}
	if d.Status != report.StatusFailed {
		t.Fatalf("a run whose connection was cut after %d bytes: status %s, want failed", cutAfter, d.Status)
	}
	started, succeeded := counter.counts()
	t.Logf("failed run (%s, %d connection(s) through the proxy, %d of %d writes started, %d completed): %s",
		time.Since(start).Round(time.Millisecond), proxy.Accepted(), started, nFiles, succeeded, str(d.Error))
	if succeeded == 0 || succeeded == nFiles {
		t.Fatalf("the cut did not fall in the middle of the uploads (%d of %d completed): adjust cutAfter", succeeded, nFiles)
	}
	left := tempFilesBelow(t, srv.dir)
	t.Logf("right after the failed run: %d temporary file(s) below the root %v; journal kept: %v",
		len(left), left, intentPending(t, srv.store))

	start = time.Now()
	b := f.app(nil)
	b.Getenv = srv.getenv
	d, err = runNet(ctx, b, direct, "", 4)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != report.StatusOK {
		t.Fatalf("rerun, connected directly: %s %s", d.Status, str(d.Error))
	}
	t.Logf("rerun: %s", time.Since(start).Round(time.Millisecond))
	if left := tempFilesBelow(t, srv.dir); len(left) > 0 {
		t.Errorf("temporary files left below the root after the rerun: %v", left)
	}
	c := storeInvariants(t, srv.store, nil, &catalog.Catalog{}, nil)
	wantPublished(t, srv.store, c, files)
}
