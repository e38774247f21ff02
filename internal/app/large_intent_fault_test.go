package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/retry"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
	"github.com/distributor-dev/distributor/internal/testutil/faultstore"
	"github.com/distributor-dev/distributor/internal/txn"
)

// largeIntentN is how many new files the large change adds. Each lives
// below a directory of about 400 bytes, so that its op (path, and the
// record's path) encodes to about 1.3 KB: 52 of them (72 KB with the other
// ops) put the intent over the lock record's 64 KiB (txn.IntentCap) with
// few writes, which keeps a fault run per crash point on six backends fast
// (decodeLargeJournal fails the test should the journal shrink under it).
const largeIntentN = 52

// largeIntentDir is the directory of the large change's new files.
var largeIntentDir = func() string {
	var segs []string
	for _, c := range "abcd" {
		segs = append(segs, strings.Repeat(string(c), 99))
	}
	return strings.Join(segs, "/")
}()

// largeIntentBundle is the second bundle of pipeline mine in the
// large-intent tests (the first is TestFaultInjectionAllBackends's): a
// replace (change.txt), a regenerated page (docs/a.md), a delete
// (drop.txt) and largeIntentN creates.
func largeIntentBundle() map[string]string {
	files := map[string]string{"keep.txt": "keep", "change.txt": "v2", "docs/a.md": "# A2"}
	for i := range largeIntentN {
		files[fmt.Sprintf("%s/%03d.txt", largeIntentDir, i)] = fmt.Sprint("file ", i)
	}
	return files
}

// largeIntentWant is the root's sorted record paths once the large change
// is published (theirs.txt is the other pipeline's).
func largeIntentWant() []string {
	want := []string{"change.txt", "docs/a.html", "keep.txt", "theirs.txt"}
	for i := range largeIntentN {
		want = append(want, fmt.Sprintf("%s/%03d.txt", largeIntentDir, i))
	}
	sort.Strings(want)
	return want
}

// journalTap records the bytes of every Put of the journal: it reads the
// body whole, then rewinds it (Seek(0, io.SeekStart)) and passes it on, so
// the Put must have been given a stream it can rewind.
type journalTap struct {
	storage.Store
	mu   sync.Mutex
	puts [][]byte
}

func (j *journalTap) Put(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if path == journal.Name {
		data, err := io.ReadAll(r)
		sk, ok := r.(io.Seeker)
		if err == nil && !ok {
			err = fmt.Errorf("the journal's Put was given a %T, which cannot rewind", r)
		}
		if err == nil {
			_, err = sk.Seek(0, io.SeekStart)
		}
		if err == nil && int64(len(data)) != size {
			err = fmt.Errorf("the journal's Put was given %d bytes for a size of %d", len(data), size)
		}
		if err != nil {
			return "", err
		}
		j.mu.Lock()
		j.puts = append(j.puts, data)
		j.mu.Unlock()
	}
	return j.Store.Put(ctx, path, r, size, opts)
}

func (j *journalTap) bodies() [][]byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.puts)
}

// decodeLargeJournal decodes a journal of the large change and checks it
// is exactly what journal encodes (re-encoding it gives its bytes), over
// the record's cap, with every op of the change.
func decodeLargeJournal(t *testing.T, data []byte) *journal.Journal {
	t.Helper()
	j, err := journal.Decode(data)
	if err != nil {
		t.Fatalf("journal of %d bytes: %v", len(data), err)
	}
	if again, err := journal.Encode(j); err != nil || string(again) != string(data) {
		t.Fatalf("the journal's %d bytes are not its encoding (%d bytes, %v)", len(data), len(again), err)
	}
	if len(data) <= txn.IntentCap {
		t.Fatalf("the journal is %d bytes, not over the lock record's %d: the test does not exercise the journal object", len(data), txn.IntentCap)
	}
	// The creates, the replace, the page, and the delete of drop.txt.
	if len(j.Ops) != largeIntentN+3 {
		t.Fatalf("the journal has %d ops, want %d", len(j.Ops), largeIntentN+3)
	}
	return j
}

// isOutput says whether a faultstore log entry ("op path") writes or
// deletes an output (not a reserved .distributor* object).
func isOutput(entry string) bool {
	_, p, _ := strings.Cut(entry, " ")
	return !strings.HasPrefix(p, ".distributor")
}

// The faultstore log entries of the journal's and the catalog's writes.
const (
	logJournalPut    = "putif " + journal.Name
	logJournalDelete = "delete " + journal.Name
	logCatalogPut    = "putif " + catalog.FileName
)

// largeIntentRoot is a root (base) on which pipeline mine published its
// first bundle (TestFaultInjectionAllBackends's) and pipeline theirs one
// file, with an unmanaged hand.txt, and mine's next bundle is the large
// change (largeIntentBundle).
type largeIntentRoot struct {
	f        *fixture
	base     storage.Store
	pristine map[string]string // the root before the large change
	cat0     *catalog.Catalog  // its catalog
}

func newLargeIntentRoot(t *testing.T, base storage.Store) *largeIntentRoot {
	t.Helper()
	r := &largeIntentRoot{f: newFixture(t, "replacement"), base: base}
	r.f.bundle("mine", "mine.one", map[string]string{"keep.txt": "keep", "change.txt": "v1", "drop.txt": "drop", "docs/a.md": "# A"})
	r.f.bundle("theirs", "theirs.one", map[string]string{"theirs.txt": "theirs"})
	for _, p := range []string{"mine", "theirs"} {
		if d := r.f.run(r.app(nil), p); d.Status != report.StatusOK {
			t.Fatalf("setup run %s: %s %s", p, d.Status, str(d.Error))
		}
	}
	ctx := context.Background()
	if _, err := base.Put(ctx, "hand.txt", strings.NewReader("hand"), 4, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r.f.bundle("mine", "mine.two", largeIntentBundle())
	r.pristine = storagetest.Snapshot(t, base)
	r0, err := ReadRoot(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	r.cat0 = r0.State.Catalog
	return r
}

// app is an App whose runs write to the root through wrap (nil: directly).
func (r *largeIntentRoot) app(wrap func(storage.Store) storage.Store) *App {
	a := r.f.app(nil)
	a.Open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
		var st storage.Store = keepOpen{r.base}
		if wrap != nil {
			st = wrap(st)
		}
		return st, nil
	}
	return a
}

// invariants checks storeInvariants against the root before the change.
func (r *largeIntentRoot) invariants(t *testing.T) *catalog.Catalog {
	t.Helper()
	return storeInvariants(t, r.base, r.pristine, r.cat0, []string{"hand.txt"})
}

// converged checks the invariants and that the large change is published.
func (r *largeIntentRoot) converged(t *testing.T, what string) {
	t.Helper()
	c := r.invariants(t)
	if got, want := strings.Join(paths(c), ","), strings.Join(largeIntentWant(), ","); got != want {
		t.Fatalf("%s: converged to %s, want %s", what, got, want)
	}
}

// TestLargeIntentFaultInjection: a replacement run whose intent is too
// large for the lock record streams it into .distributor.journal before
// its first change (the test fails if the journal is not written, or an
// output is written before it, or its bytes are not the journal's
// encoding). Failing, and separately crashing at (every later write fails
// too), the calls that matter for the streamed journal on every backend of
// faultBackends (the journal's own Put, the first and a middle output write
// after it, the catalog write, the journal's delete, and a few evenly
// spaced others):
//   - nothing is written unless the journal is on the root first;
//   - a failed (not crashed) run settles the root by itself: no journal
//     left, a truthful catalog, no orphan;
//   - a crash between the journal's Put and its delete leaves the journal,
//     decoding to the same ops;
//   - recovery (takeover, then txn.Recover) leaves a truthful catalog, no
//     orphan (no file left on a journaled create's word), no lost record
//     and unmanaged content untouched, and a clean rerun converges.
func TestLargeIntentFaultInjection(t *testing.T) {
	points := map[string]int{}
	for _, b := range faultBackends {
		t.Run(b.name, func(t *testing.T) {
			base := b.open(t)
			r := newLargeIntentRoot(t, base)
			f, app := r.f, r.app

			// The clean run: where its journal goes, and its calls.
			tap := &journalTap{}
			counter := &faultstore.Store{Ignore: faultstore.IgnoreLock}
			if d := f.run(app(func(s storage.Store) storage.Store { tap.Store = s; counter.Store = tap; return counter }), "mine"); d.Status != report.StatusOK {
				t.Fatalf("clean run: %s %s", d.Status, str(d.Error))
			}
			log := counter.Log()
			bodies := tap.bodies()
			if len(bodies) != 1 {
				t.Fatalf("the clean run put the journal %d times, want once (an intent over %d bytes rode in the lock record?); %d calls, the first %q",
					len(bodies), txn.IntentCap, len(log), log[:min(len(log), 2)])
			}
			clean := decodeLargeJournal(t, bodies[0])
			r.converged(t, "clean run")
			jPut, jDel, cat := slices.Index(log, logJournalPut)+1, slices.Index(log, logJournalDelete)+1, slices.Index(log, logCatalogPut)+1
			var outputs []int // 1-based calls writing or deleting an output
			for i, e := range log {
				if isOutput(e) {
					outputs = append(outputs, i+1)
				}
			}
			if jPut == 0 || jDel == 0 || cat == 0 || len(outputs) == 0 || outputs[0] < jPut || cat < outputs[len(outputs)-1] || jDel < cat {
				t.Fatalf("clean run's calls, want the journal's Put, the outputs, the catalog, the journal's delete: %q", log)
			}
			n := len(log)
			ks := []int{jPut, outputs[0], outputs[len(outputs)/2], cat, jDel}
			for i := 1; i <= 3; i++ {
				ks = append(ks, i*n/4)
			}
			slices.Sort(ks)
			ks = slices.Compact(ks)
			points[b.name] = len(ks)
			t.Logf("%d calls; journal Put %d (%d bytes), outputs %d..%d, catalog %d, journal delete %d; crash points %v",
				n, jPut, len(bodies[0]), outputs[0], outputs[len(outputs)-1], cat, jDel, ks)

			c := &cleanRun{log: log, jPut: jPut, jDel: jDel, clean: clean}
			for _, k := range ks {
				for _, crash := range []bool{false, true} {
					r.crashAt(t, c, k, crash)
				}
			}
		})
	}
	t.Logf("crash points per backend (each failed once and crashed once): %v", points)
}

// cleanRun is what the clean run of TestLargeIntentFaultInjection showed:
// its calls, the journal's Put and delete among them (1-based), its journal.
type cleanRun struct {
	log        []string
	jPut, jDel int
	clean      *journal.Journal
}

// crashAt fails (crash: and every later call) call k of a run of the large
// change on r's pristine root, then checks what TestLargeIntentFaultInjection
// promises of it, recovers as the next writer would and reruns.
func (r *largeIntentRoot) crashAt(t *testing.T, c *cleanRun, k int, crash bool) {
	t.Helper()
	base, f, app, ctx := r.base, r.f, r.app, context.Background()
	log, jPut, jDel, clean := c.log, c.jPut, c.jDel, c.clean
	storeRestore(t, base, r.pristine)
	// (The restore rewrote the catalog: a new version on some servers.)
	_, baseVersion, err := base.Get(ctx, catalog.FileName)
	if err != nil {
		t.Fatal(err)
	}
	fs := &faultstore.Store{FailAt: k, Sticky: crash, Ignore: faultstore.IgnoreLock}
	d := f.run(app(func(s storage.Store) storage.Store { fs.Store = s; return fs }), "mine")
	flog := fs.Log()
	if len(flog) < k {
		t.Fatalf("k=%d crash=%v: the run made only %d calls: %q", k, crash, len(flog), flog)
	}
	op := flog[k-1]
	if op != log[k-1] && (!isOutput(op) || !isOutput(log[k-1])) {
		t.Fatalf("k=%d crash=%v: call %d is %q, in the clean run %q", k, crash, k, op, log[k-1])
	}
	if d.Status == report.StatusOK && op != logJournalDelete {
		t.Fatalf("k=%d crash=%v: run with %q failing succeeded", k, crash, op)
	}
	// Nothing is written unless the journal is on the root.
	put := slices.Index(flog, logJournalPut) + 1
	for i, e := range flog {
		if isOutput(e) && (put == 0 || put > i+1 || put == k) {
			t.Fatalf("k=%d crash=%v: call %d %q, with the journal's Put at %d (failed: %v): %q",
				k, crash, i+1, e, put, put == k, flog)
		}
	}
	_, _, jerr := base.Get(ctx, journal.Name)
	switch {
	case k == jDel || crash && k > jPut && k < jDel:
		if jerr != nil {
			t.Fatalf("k=%d crash=%v: %q failed after the journal's Put, and no journal is left: %v", k, crash, op, jerr)
		}
		data, _, _ := base.Get(ctx, journal.Name)
		if j := decodeLargeJournal(t, data); j.BaseVersion != string(baseVersion) || !reflect.DeepEqual(j.Ops, clean.Ops) {
			t.Fatalf("k=%d crash=%v: the journal left is not the change's (base version %q, want %q)", k, crash, j.BaseVersion, baseVersion)
		}
	case !errors.Is(jerr, storage.ErrNotExist):
		t.Fatalf("k=%d crash=%v: %q failed; journal left: %v", k, crash, op, jerr)
	case !crash:
		// A failed run settled the root by itself.
		r.invariants(t)
	}
	// What the next writer does first.
	takeOverDeadRun(t, base)
	rec, err := txn.Recover(ctx, base, nil, time.Now())
	if err != nil {
		t.Fatalf("k=%d crash=%v: recover: %v", k, crash, err)
	}
	if rec != nil && len(rec.Left) > 0 {
		t.Errorf("k=%d crash=%v: recovery left files it journaled: %+v", k, crash, rec.Left)
	}
	if rec != nil || crash { // (else checked above, and recovery found nothing)
		r.invariants(t)
	}
	if d := f.run(app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("k=%d crash=%v: rerun: %s %s", k, crash, d.Status, str(d.Error))
	}
	r.converged(t, fmt.Sprintf("k=%d crash=%v", k, crash))
}

// tornJournal sits below the retry wrapper, above a store whose connection
// goes through the proxy p: the first attempt of the journal's Put (every
// attempt, with every set) has its connection dropped after cut bytes
// (p.CutAfter, lifted once the attempt returned). After every attempt, and right before the journal's delete,
// it reads the journal on the server (read, not through the proxy): absent,
// or exactly the bytes the Put was given, never a partial or doubled
// journal.
type tornJournal struct {
	storage.Store
	t     *testing.T
	p     *faultproxy.Proxy
	cut   int64
	every bool
	read  func() ([]byte, error) // the journal on the server

	mu       sync.Mutex
	want     []byte  // the bytes the first attempt was given
	attempts []error // each attempt's outcome
	sent     []int64 // bytes the proxy forwarded during each attempt
	seen     int     // times the journal was found on the server
}

func (j *tornJournal) Put(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if path != journal.Name {
		return j.Store.Put(ctx, path, r, size, opts)
	}
	// What this attempt sends (read whole, then rewound, as a retry does).
	body, err := io.ReadAll(r)
	if err == nil {
		sk, ok := r.(io.Seeker)
		if !ok {
			return "", fmt.Errorf("the journal's Put was given a %T, which cannot rewind", r)
		}
		_, err = sk.Seek(0, io.SeekStart)
	}
	if err != nil {
		return "", err
	}
	j.mu.Lock()
	first := len(j.attempts) == 0
	if first {
		j.want = body
	} else if !bytes.Equal(body, j.want) {
		j.t.Errorf("attempt %d of the journal's Put was given %d bytes other than the first's %d", len(j.attempts)+1, len(body), len(j.want))
	}
	j.mu.Unlock()
	if first || j.every {
		j.p.CutAfter(j.cut)
	}
	before := j.p.Forwarded()
	v, err := j.Store.Put(ctx, path, r, size, opts)
	j.p.CutAfter(0)
	j.mu.Lock()
	j.attempts = append(j.attempts, err)
	j.sent = append(j.sent, j.p.Forwarded()-before)
	j.mu.Unlock()
	j.check(fmt.Sprintf("after attempt %d of its Put (%v)", len(j.attempts), err))
	return v, err
}

func (j *tornJournal) Delete(ctx context.Context, path string) error {
	if path == journal.Name {
		j.check("before its delete")
	}
	return j.Store.Delete(ctx, path)
}

// check reads the journal on the server: absent, or the Put's bytes.
func (j *tornJournal) check(when string) {
	data, err := j.read()
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case errors.Is(err, storage.ErrNotExist):
	case err != nil:
		j.t.Errorf("read the journal %s: %v", when, err)
	case !bytes.Equal(data, j.want):
		j.t.Errorf("the journal %s is %d bytes, not the %d the Put was given (a partial or doubled journal)", when, len(data), len(j.want))
	default:
		j.seen++
	}
}

// TestLargeIntentTornJournalPut: the connection of the journal's Put (a
// streamed intent of about 72 KB) drops after 32 KiB, part way through the
// body, on S3 (gofakes3) and SFTP (the in-process server), through
// faultproxy. The journal, whenever it is on the server (after each
// attempt, before its delete), is exactly the bytes the Put was given,
// never a partial or doubled one.
//   - once: the store's retry wrapper rewinds the journal.Stream and sends
//     it again, each attempt the same bytes; the run publishes the change
//     and leaves no journal and no temporary file.
//   - every attempt: the run fails before its first change (the root is
//     as it was: no journal, and on SFTP no temporary file), and recovery
//     and a rerun converge.
func TestLargeIntentTornJournalPut(t *testing.T) {
	const cut = 32 << 10
	type tornCase struct {
		name  string
		open  func(t *testing.T) (direct, via storage.Store, p *faultproxy.Proxy, dir string)
		every bool
	}
	var cases []tornCase
	for name, open := range map[string]func(t *testing.T) (storage.Store, storage.Store, *faultproxy.Proxy, string){
		"s3-inprocess": openTornS3, "sftp-inprocess": openTornSFTP} {
		cases = append(cases, tornCase{name + "/once", open, false}, tornCase{name + "/every-attempt", open, true})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			direct, via, p, dir := c.open(t)
			r := newLargeIntentRoot(t, direct)
			ctx := context.Background()
			torn := &tornJournal{Store: keepOpen{via}, t: t, p: p, cut: cut, every: c.every, read: func() ([]byte, error) {
				data, _, err := direct.Get(ctx, journal.Name)
				return data, err
			}}
			var retried []string
			var mu sync.Mutex
			d := r.f.run(r.app(func(storage.Store) storage.Store {
				return retry.New(torn, retry.Options{Attempts: 4, Base: time.Millisecond, Max: 10 * time.Millisecond, Budget: 2 * time.Second,
					OnRetry: func(op, path string, attempt int, err error) {
						mu.Lock()
						defer mu.Unlock()
						retried = append(retried, fmt.Sprintf("%s %s #%d: %v", op, path, attempt, err))
					}})
			}), "mine")
			torn.mu.Lock()
			attempts, sent, seen, want := torn.attempts, torn.sent, torn.seen, torn.want
			torn.mu.Unlock()
			t.Logf("run %s (%d retries: %q); journal of %d bytes: attempts %v, forwarded %v bytes; found on the server %d times",
				d.Status, d.Retries, retried, len(want), attempts, sent, seen)
			if len(attempts) == 0 || attempts[0] == nil {
				t.Fatalf("the journal's first Put was not cut: attempts %v", attempts)
			}
			// (The attempt's bytes include a reconnection's on SFTP.)
			if len(want) <= 2*cut || sent[0] >= int64(len(want)) {
				t.Fatalf("the cut (%d bytes forwarded) was not part way through the journal's %d bytes", sent[0], len(want))
			}
			decodeLargeJournal(t, want)
			if !c.every {
				// The retry completed the journal: its last attempt succeeded,
				// the journal was on the server, whole, until its delete.
				if d.Status != report.StatusOK || len(attempts) != 2 || attempts[1] != nil || seen != 2 || d.Retries == 0 {
					t.Fatalf("run %s %s: the journal's Put attempts %v, found whole %d times, %d retries", d.Status, str(d.Error), attempts, seen, d.Retries)
				}
			} else {
				// Every attempt cut: the run failed before its first change.
				if d.Status == report.StatusOK || len(attempts) < 2 || slices.Contains(attempts, nil) || seen != 0 {
					t.Fatalf("run %s %s: the journal's Put attempts %v, found %d times", d.Status, str(d.Error), attempts, seen)
				}
				if got := storagetest.Snapshot(t, direct); !maps.Equal(got, r.pristine) {
					t.Fatalf("the failed run changed the root: %d objects, was %d", len(got), len(r.pristine))
				}
				noTempFile(t, dir, "by the failed run")
				takeOverDeadRun(t, direct)
				if _, err := txn.Recover(ctx, direct, nil, time.Now()); err != nil {
					t.Fatalf("recover: %v", err)
				}
				r.invariants(t)
				if d := r.f.run(r.app(nil), "mine"); d.Status != report.StatusOK {
					t.Fatalf("rerun: %s %s", d.Status, str(d.Error))
				}
			}
			r.converged(t, "after the torn journal")
			noTempFile(t, dir, "after the run")
		})
	}
}

// noTempFile fails t for a temporary file under dir ("": none to look at).
func noTempFile(t *testing.T, dir, when string) {
	t.Helper()
	if dir == "" {
		return
	}
	for p := range storagetest.DirSnapshot(t, dir) {
		if strings.Contains(p, storage.TempPrefix) {
			t.Errorf("temporary file left %s: %s", when, p)
		}
	}
}

// openTornS3 is an in-process S3 root opened directly, and through a fault
// proxy as a destination opens it (minio-go sends once: the retry wrapper
// is the only one).
func openTornS3(t *testing.T) (direct, via storage.Store, p *faultproxy.Proxy, dir string) {
	srv := s3test.Start(t, s3test.TLS())
	p = faultproxy.New(t, srv.Addr)
	opts := srv.Options("site").ForRoot("site", srv.Getenv)
	opts.Endpoint = "https://" + p.Addr()
	opts.DialTimeout, opts.ResponseTimeout, opts.IdleTimeout = 2*time.Second, 5*time.Second, 5*time.Second
	via, err := s3.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { via.Close() })
	return srv.Open(t, "site"), via, p, ""
}

// openTornSFTP is an in-process SFTP root opened directly, and through a
// fault proxy; dir is the root's directory on this machine.
func openTornSFTP(t *testing.T) (direct, via storage.Store, p *faultproxy.Proxy, dir string) {
	l := sftptest.Start(t).Login()
	direct, err := sftp.New(context.Background(), sftpOptions(l))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	p = faultproxy.New(t, net.JoinHostPort(l.Host, strconv.Itoa(l.Port)))
	opts := sftpOptions(l)
	opts.Host, opts.Port = "127.0.0.1", p.Port()
	opts.KnownHostsFile = sftptest.KnownHostsFor(t, l.KnownHosts, p.Addr())
	opts.DialTimeout, opts.KeepaliveInterval, opts.KeepaliveTimeout = 2*time.Second, time.Second, 2*time.Second
	via, err = sftp.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { via.Close() })
	return direct, via, p, l.Root
}
