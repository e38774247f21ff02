package retry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/backoff"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// hangBound is how long a call may take before a test calls it hung:
// generous, so that no test depends on the machine's speed, and grown by
// the test-wide time factor.
var hangBound = testtime.Scale(10 * time.Second)

func put(t *testing.T, st storage.Store, p, data string) {
	t.Helper()
	if _, err := st.Put(t.Context(), p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put(%s): %v", p, err)
	}
}

func get(t *testing.T, st storage.Store, p string) string {
	t.Helper()
	data, _, err := st.Get(t.Context(), p)
	if err != nil {
		t.Fatalf("Get(%s): %v", p, err)
	}
	return string(data)
}

// retriedOp is an operation TestRetriedOps makes fail twice, transiently.
type retriedOp struct {
	op, name string // name: the subtest's, if not op
	run      func(t *testing.T, s *Store) error
}

// retriedReads are the operations of TestRetriedOps that read.
func retriedReads() []retriedOp {
	return []retriedOp{
		{"get", "", func(t *testing.T, s *Store) error {
			data, v, err := s.Get(t.Context(), "a/x")
			if err == nil && (string(data) != "x-data" || v == "") {
				t.Errorf("Get = %q, %q", data, v)
			}
			return err
		}},
		{"stat", "", func(t *testing.T, s *Store) error {
			info, err := s.Stat(t.Context(), "a/x")
			if err == nil && (info.Path != "a/x" || info.Size != 6) {
				t.Errorf("Stat = %+v", info)
			}
			return err
		}},
		{"open", "", func(t *testing.T, s *Store) error {
			rc, err := s.Open(t.Context(), "a/x")
			if err != nil {
				return err
			}
			defer rc.Close()
			if data, err := io.ReadAll(rc); err != nil || string(data) != "x-data" {
				t.Errorf("read = %q, %v", data, err)
			}
			return nil
		}},
		{"list", "", func(t *testing.T, s *Store) error {
			var paths []string
			err := s.List(t.Context(), "a/", func(info storage.Info) error {
				paths = append(paths, info.Path)
				return nil
			})
			if err == nil && !slices.Equal(paths, []string{"a/x", "a/y"}) {
				t.Errorf("List = %q", paths)
			}
			return err
		}},
		{"list-page", "", func(t *testing.T, s *Store) error {
			infos, complete, err := s.ListPage(t.Context(), "a/", 10)
			if err == nil && (len(infos) != 2 || infos[0].Path != "a/x" || infos[1].Path != "a/y" || !complete) {
				t.Errorf("ListPage = %+v, complete %v", infos, complete)
			}
			return err
		}},
	}
}

// retriedWrites are the operations of TestRetriedOps that write, sync or
// sweep.
func retriedWrites() []retriedOp {
	return []retriedOp{
		{"delete", "", func(t *testing.T, s *Store) error {
			if err := s.Delete(t.Context(), "a/x"); err != nil {
				return err
			}
			if _, err := s.Stat(t.Context(), "a/x"); !errors.Is(err, storage.ErrNotExist) {
				t.Errorf("Stat after Delete: %v", err)
			}
			return nil
		}},
		{"sync", "", func(t *testing.T, s *Store) error { return s.Sync(t.Context()) }},
		{"sweep-temp", "sweep-temp dry-run", func(t *testing.T, s *Store) error {
			found, err := s.SweepTemp(t.Context(), storage.SweepOptions{DryRun: true})
			if err == nil && len(found) != 0 {
				t.Errorf("SweepTemp = %q", found)
			}
			return err
		}},
		{"sweep-temp", "sweep-temp remove", func(t *testing.T, s *Store) error {
			found, err := s.SweepTemp(t.Context(), storage.SweepOptions{Dirs: []string{"a"}})
			if err == nil && len(found) != 0 {
				t.Errorf("SweepTemp = %q", found)
			}
			return err
		}},
		{"put", "", func(t *testing.T, s *Store) error {
			if _, err := s.Put(t.Context(), "a/z", strings.NewReader("z-data"), 6, storage.PutOptions{}); err != nil {
				return err
			}
			if got := get(t, s, "a/z"); got != "z-data" {
				t.Errorf("stored %q", got)
			}
			return nil
		}},
		{"put-new", "", func(t *testing.T, s *Store) error {
			if _, err := s.Put(t.Context(), "a/z", strings.NewReader("z-data"), 6, storage.PutOptions{Mode: storage.PutCreate}); err != nil {
				return err
			}
			if got := get(t, s, "a/z"); got != "z-data" {
				t.Errorf("stored %q", got)
			}
			return nil
		}},
		{"put-if", "", func(t *testing.T, s *Store) error {
			v, err := storage.PutIf(t.Context(), s, "a/z", []byte("z-data"), "")
			if err != nil {
				return err
			}
			if _, cur, _ := s.Get(t.Context(), "a/z"); cur != v {
				t.Errorf("PutIf returned version %q, Get %q", v, cur)
			}
			return nil
		}},
	}
}

// TestRetriedOps: every operation that is safe to repeat is retried after
// transient failures, and then returns the wrapped Store's result.
func TestRetriedOps(t *testing.T) {
	tests := slices.Concat(retriedReads(), retriedWrites())
	for _, tt := range tests {
		t.Run(cmp.Or(tt.name, tt.op), func(t *testing.T) {
			f, s, sl, log := setup(t)
			put(t, f.Store, "a/x", "x-data")
			put(t, f.Store, "a/y", "y-data")
			f.failN(tt.op, 2, errReset)
			if err := tt.run(t, s); err != nil {
				t.Fatalf("%s: %v", tt.op, err)
			}
			if n := f.count(tt.op); n != 3 {
				t.Errorf("%d calls, want 3", n)
			}
			if n := s.Retries(); n != 2 {
				t.Errorf("Retries() = %d, want 2", n)
			}
			if want := []time.Duration{500 * time.Microsecond, time.Millisecond}; !slices.Equal(sl.list(), want) {
				t.Errorf("waits %v, want %v", sl.list(), want)
			}
			if got := log.list(); len(got) != 2 || !strings.HasPrefix(got[0], tt.op+" ") || !strings.HasSuffix(got[1], " #2") {
				t.Errorf("OnRetry calls %q", got)
			}
		})
	}
}

// TestFinalErrorsNotRetried: errors that say the request itself failed,
// and any error the classifier does not know, are returned at once,
// unchanged.
func TestFinalErrorsNotRetried(t *testing.T) {
	for _, target := range []error{
		storage.ErrNotExist, storage.ErrNotObject, storage.ErrPrecondition, storage.ErrInvalidPath,
		os.ErrClosed, fs.ErrPermission, context.Canceled, errors.New("unknown failure"),
	} {
		t.Run(target.Error(), func(t *testing.T) {
			f, s, sl, _ := setup(t)
			f.failN("stat", 1, target)
			_, err := s.Stat(t.Context(), "x")
			if !errors.Is(err, target) || err.Error() != "fake: stat x: "+target.Error() {
				t.Errorf("Stat: %v, want the fake's error unchanged", err)
			}
			if n := f.count("stat"); n != 1 || s.Retries() != 0 || len(sl.list()) != 0 {
				t.Errorf("%d calls, %d retries, waits %v; want 1 call and no retry", n, s.Retries(), sl.list())
			}
		})
	}
}

// TestFinalAfterTransient: a final error after transient ones is returned
// (matching it, not the transient failure).
func TestFinalAfterTransient(t *testing.T) {
	f, s, _, _ := setup(t)
	f.failN("get", 1, errReset)
	_, _, err := s.Get(t.Context(), "missing")
	if !errors.Is(err, storage.ErrNotExist) || errors.Is(err, errReset) {
		t.Errorf("Get: %v; want ErrNotExist, not the reset", err)
	}
	if n := f.count("get"); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

// TestAttemptLimit: a call gives up after Attempts transient failures and
// returns the last, wrapped.
func TestAttemptLimit(t *testing.T) {
	f, s, sl, _ := setup(t)
	f.failN("get", 10, errReset)
	_, _, err := s.Get(t.Context(), "x")
	if !errors.Is(err, errReset) || !strings.Contains(err.Error(), "gave up after 4 attempts") {
		t.Errorf("Get: %v", err)
	}
	if n := f.count("get"); n != 4 {
		t.Errorf("%d calls, want 4", n)
	}
	if n := s.Retries(); n != 3 {
		t.Errorf("Retries() = %d, want 3", n)
	}
	want := []time.Duration{500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond}
	if !slices.Equal(sl.list(), want) {
		t.Errorf("waits %v, want %v", sl.list(), want)
	}
}

// TestOneAttempt: Attempts 1 disables retries; the error is unchanged.
func TestOneAttempt(t *testing.T) {
	f := newFake(t)
	s := New(f, Options{Attempts: 1, Sleep: (&sleeper{}).sleep})
	f.failN("get", 1, errReset)
	_, _, err := s.Get(t.Context(), "x")
	if err == nil || err.Error() != "fake: get x: "+errReset.Error() || f.count("get") != 1 {
		t.Errorf("Get: %v after %d calls", err, f.count("get"))
	}
}

// TestBackoff: full jitter below a ceiling that doubles from Base up to
// Max.
func TestBackoff(t *testing.T) {
	f := newFake(t)
	sl := &sleeper{}
	jitter := []float64{0.999, 0.5, 0, 0.25, 1.5 /* out of range: 0 */, 0.5, -1}
	var mu sync.Mutex
	s := New(f, Options{Attempts: 8, Base: 100 * time.Millisecond, Max: 500 * time.Millisecond, Budget: time.Hour, Sleep: sl.sleep,
		Rand: func() float64 {
			mu.Lock()
			defer mu.Unlock()
			x := jitter[0]
			jitter = jitter[1:]
			return x
		}})
	f.failN("get", 7, errReset)
	put(t, f, "x", "x")
	if got := get(t, s, "x"); got != "x" {
		t.Fatalf("Get = %q", got)
	}
	want := []time.Duration{
		time.Duration(0.999 * float64(100*time.Millisecond)),
		100 * time.Millisecond, // 0.5 * 200ms
		0,
		125 * time.Millisecond, // 0.25 * 500ms (800ms capped)
		0,
		250 * time.Millisecond,
		0,
	}
	if !slices.Equal(sl.list(), want) {
		t.Errorf("waits %v, want %v", sl.list(), want)
	}
}

// TestDefaults: zero Options take the documented defaults.
func TestDefaults(t *testing.T) {
	s := New(newFake(t), Options{})
	o := s.opts
	if o.Attempts != DefaultAttempts || o.Base != DefaultBase || o.Max != DefaultMax || o.Budget != DefaultBudget ||
		o.Sleep == nil || o.Rand == nil || o.OnRetry != nil {
		t.Errorf("defaults: %+v", o)
	}
	if s := New(newFake(t), Options{Base: time.Minute}); s.opts.Max != time.Minute {
		t.Errorf("Max %v below Base %v", s.opts.Max, s.opts.Base)
	}
}

// TestBudget: the budget bounds the total wait over all calls: a call
// whose wait would exceed it waits what is left, the next gives up, and
// once it is spent no call retries any more.
func TestBudget(t *testing.T) {
	f := newFake(t)
	sl := &sleeper{}
	s := New(f, Options{Attempts: 100, Base: 2 * time.Millisecond, Max: 8 * time.Millisecond, Budget: 10 * time.Millisecond,
		Sleep: sl.sleep, Rand: func() float64 { return 0.5 }})
	f.failN("get", 100, errReset)
	_, _, err := s.Get(t.Context(), "x")
	if !errors.Is(err, errReset) || !strings.Contains(err.Error(), "retry budget") {
		t.Errorf("Get: %v", err)
	}
	// 1ms, 2ms, 4ms, then 3ms of 4ms left; then nothing is left.
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 3 * time.Millisecond}
	if !slices.Equal(sl.list(), want) || s.Waited() != 10*time.Millisecond {
		t.Errorf("waits %v (%v in all), want %v", sl.list(), s.Waited(), want)
	}
	if n := f.count("get"); n != 5 || s.Retries() != 4 {
		t.Errorf("%d calls, %d retries; want 5 and 4", n, s.Retries())
	}
	// Spent: another call is not retried.
	_, err = s.Stat(t.Context(), "x")
	f.failN("stat", 1, errReset)
	_, err = s.Stat(t.Context(), "x")
	if !errors.Is(err, errReset) || f.count("stat") != 2 || s.Retries() != 4 {
		t.Errorf("Stat after the budget: %v, %d calls, %d retries", err, f.count("stat"), s.Retries())
	}
}

// TestBudgetShared: concurrent calls draw on one budget.
func TestBudgetShared(t *testing.T) {
	f := newFake(t)
	sl := &sleeper{}
	const budget = 20 * time.Millisecond
	s := New(f, Options{Attempts: 1000, Base: time.Millisecond, Max: time.Millisecond, Budget: budget,
		Sleep: sl.sleep, Rand: func() float64 { return 0.999 }})
	f.failN("stat", 10000, errReset)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := s.Stat(context.Background(), "x"); !errors.Is(err, errReset) {
				t.Errorf("Stat: %v", err)
			}
		})
	}
	wg.Wait()
	if got := sl.total(); got > budget || s.Waited() != got {
		t.Errorf("waited %v (Waited %v), budget %v", got, s.Waited(), budget)
	}
	// 20 waits of 999µs, a 21st of the 20µs left; then each goroutine's
	// last failure is final.
	if n, r := f.count("stat"), s.Retries(); r != 21 || n != 8+r {
		t.Errorf("%d calls, %d retries; want 29 and 21", n, r)
	}
}

// TestCancelDuringBackoff: a call waiting to retry returns as soon as its
// context is cancelled, with the context's error wrapping the failure.
func TestCancelDuringBackoff(t *testing.T) {
	f := newFake(t)
	s := New(f, Options{Base: time.Hour, Max: time.Hour, Budget: 10 * time.Hour, Rand: func() float64 { return 0.5 }})
	f.failN("get", 1, errReset)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, _, err := s.Get(ctx, "x")
	if d := time.Since(start); d > hangBound {
		t.Errorf("Get returned after %v", d)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errReset) {
		t.Errorf("Get: %v; want the cancellation wrapping the reset", err)
	}
	if n := f.count("get"); n != 1 || s.Retries() != 0 {
		t.Errorf("%d calls, %d retries", n, s.Retries())
	}
}

// TestDoneContextNotRetried: a transient failure under a context that is
// done is not retried; the error carries the context's cause.
func TestDoneContextNotRetried(t *testing.T) {
	f, s, sl, _ := setup(t)
	errFence := errors.New("lock lease lapsed")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errFence)
	f.failN("delete", 1, errReset)
	err := s.Delete(ctx, "x")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errFence) || !errors.Is(err, errReset) {
		t.Errorf("Delete: %v", err)
	}
	if n := f.count("delete"); n != 1 || len(sl.list()) != 0 {
		t.Errorf("%d calls, waits %v", n, sl.list())
	}
	// The adapter's own report of the context is returned as it is.
	f.failN("delete", 1, fmt.Errorf("x: %w", context.Canceled))
	if err := s.Delete(ctx, "x"); err == nil || err.Error() != "fake: delete x: x: context canceled" {
		t.Errorf("Delete: %v", err)
	}
}

// TestListRetriedBeforeFirstEntry: List is retried while fn has not been
// called, not after; fn's own error is returned unchanged.
func TestListRetriedBeforeFirstEntry(t *testing.T) {
	f, s, _, _ := setup(t)
	put(t, f, "a", "a")
	put(t, f, "b", "b")
	list := func() ([]string, error) {
		var seen []string
		err := s.List(t.Context(), "", func(info storage.Info) error {
			seen = append(seen, info.Path)
			return nil
		})
		return seen, err
	}
	f.fail("list", fault{err: errReset}, fault{err: errReset})
	if seen, err := list(); err != nil || !slices.Equal(seen, []string{"a", "b"}) {
		t.Errorf("List = %q, %v", seen, err)
	}
	f.fail("list", fault{err: errReset, list: 1})
	seen, err := list()
	if !errors.Is(err, errReset) || !slices.Equal(seen, []string{"a"}) {
		t.Errorf("List after an entry = %q, %v; want the failure, not a retry", seen, err)
	}
	if n := f.count("list"); n != 4 {
		t.Errorf("%d calls, want 4", n)
	}
	errStop := errors.New("stop")
	f.fail("list", fault{err: errReset})
	err = s.List(t.Context(), "", func(storage.Info) error { return errStop })
	if err != errStop {
		t.Errorf("List: %v, want fn's error unchanged", err)
	}
}

// TestOpenStreamNotResumed: Open retries opening; its stream is the
// wrapped Store's own.
func TestOpenStreamNotResumed(t *testing.T) {
	f, s, _, _ := setup(t)
	put(t, f, "a", "data")
	f.failN("open", 1, errReset)
	rc, err := s.Open(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, ok := rc.(*os.File); !ok {
		t.Errorf("Open returned a %T, want the local store's *os.File", rc)
	}
}

// TestPassThrough: String and Close are the wrapped Store's.
func TestPassThrough(t *testing.T) {
	f, s, _, _ := setup(t)
	if s.String() != f.String() || s.Unwrap() != storage.Store(f) {
		t.Errorf("String() = %q, Unwrap() = %v", s.String(), s.Unwrap())
	}
	if err := s.Close(); err != nil || !f.closed {
		t.Errorf("Close: %v, closed %v", err, f.closed)
	}
}

// unwrapper is a wrapper around a Store that tells what it wraps.
type unwrapper struct{ storage.Store }

func (u unwrapper) Unwrap() storage.Store { return u.Store }

// TestCount finds the retrying Store through wrappers.
func TestCount(t *testing.T) {
	f, s, _, _ := setup(t)
	f.failN("sync", 1, errReset)
	if err := s.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		st   storage.Store
		want int
	}{{s, 1}, {unwrapper{s}, 1}, {unwrapper{unwrapper{s}}, 1}, {f, 0}, {unwrapper{f}, 0}, {nil, 0}} {
		if got := Count(c.st); got != c.want {
			t.Errorf("Count(%T) = %d, want %d", c.st, got, c.want)
		}
	}
}

// TestConcurrent: calls from many goroutines, with failures, under -race.
func TestConcurrent(t *testing.T) {
	f := newFake(t)
	s := New(f, Options{Attempts: 20, Base: time.Microsecond, Max: 10 * time.Microsecond, Budget: time.Second})
	f.failN("put", 16, errReset)
	f.failN("get", 16, errReset)
	f.failN("put-if", 16, errReset)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			p, data := fmt.Sprintf("d%d/x", i), fmt.Sprintf("data %d", i)
			if _, err := s.Put(context.Background(), p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
				t.Error(err)
				return
			}
			if got, _, err := s.Get(context.Background(), p); err != nil || string(got) != data {
				t.Errorf("Get(%s) = %q, %v", p, got, err)
			}
			if _, err := storage.PutIf(context.Background(), s, p+".c", []byte(data), ""); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if s.Retries() < 48 {
		t.Errorf("Retries() = %d, want at least 48", s.Retries())
	}
}

// TestSleep: the default wait waits, and returns early when the context
// is done.
func TestSleep(t *testing.T) {
	if err := backoff.Sleep(t.Context(), time.Millisecond); err != nil {
		t.Error(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	start := time.Now()
	if err := backoff.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > hangBound {
		t.Errorf("sleep: %v after %v", err, time.Since(start))
	}
}

// TestReadVersionedRetriedBeforeFn: ReadVersioned is retried while its
// failures come before fn is called; fn sees the object once.
func TestReadVersionedRetriedBeforeFn(t *testing.T) {
	f, s, _, log := setup(t)
	put(t, f, "c", "catalog")
	f.failN("read", 2, errReset)
	calls := 0
	var got []byte
	v, err := s.ReadVersioned(t.Context(), "c", func(r io.Reader) (err error) {
		calls++
		got, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, want, _ := f.Get(t.Context(), "c"); v != want || string(got) != "catalog" || calls != 1 {
		t.Errorf("ReadVersioned = %q, read %q in %d calls of fn; want %q, %q, 1", v, got, calls, want, "catalog")
	}
	if n := f.count("read"); n != 3 || s.Retries() != 2 {
		t.Errorf("%d attempts, %d retries; want 3 and 2", n, s.Retries())
	}
	if got := log.list(); !slices.Equal(got, []string{"read c #1", "read c #2"}) {
		t.Errorf("OnRetry: %q", got)
	}
}

// TestReadVersionedNotRetriedAfterFn: a failure once fn has been called is
// returned (fn cannot be shown the object again), and so is fn's own error,
// unwrapped.
func TestReadVersionedNotRetriedAfterFn(t *testing.T) {
	f, s, _, _ := setup(t)
	put(t, f, "c", "catalog")
	f.fail("read", fault{err: errReset, midRead: true, read: 3})
	calls := 0
	_, err := s.ReadVersioned(t.Context(), "c", func(r io.Reader) error {
		calls++
		_, err := io.ReadAll(r)
		return err
	})
	if !errors.Is(err, errReset) || calls != 1 || f.count("read") != 1 || s.Retries() != 0 {
		t.Errorf("ReadVersioned: %v after %d calls of fn, %d attempts, %d retries; want the reset, 1, 1, 0",
			err, calls, f.count("read"), s.Retries())
	}
	errFn := fmt.Errorf("fn: %w", errReset) // transient-looking, yet fn's
	_, err = s.ReadVersioned(t.Context(), "c", func(io.Reader) error { return errFn })
	if err != errFn || f.count("read") != 2 {
		t.Errorf("ReadVersioned with a failing fn: %v after %d attempts; want fn's error itself after 2", err, f.count("read"))
	}
	// Missing: not transient, returned at once, fn not called.
	_, err = s.ReadVersioned(t.Context(), "nope", func(io.Reader) error { t.Error("fn called"); return nil })
	if !errors.Is(err, storage.ErrNotExist) || f.count("read") != 3 {
		t.Errorf("ReadVersioned of a missing object: %v", err)
	}
}

// TestConformance: the wrapper keeps the Store contract (local disk
// underneath), ReadVersioned and PutIfStream included.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		st, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		s := New(st, Options{})
		t.Cleanup(func() { s.Close() })
		return s
	})
}
