package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

// errReset is a transient failure, as a dropped connection produces it.
var errReset = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}

// fault scripts one failing call of a fake.
type fault struct {
	err error // returned (nil with pass: the call goes through)
	// hook runs first (another writer's change, a late landing...).
	hook func()
	// pass passes the call on after hook and returns its result.
	pass bool
	// after passes the call on, then returns err anyway: the call landed
	// and its answer was lost.
	after bool
	// read is how many bytes Put and PutNew read from their reader before
	// failing (without passing the call on).
	read int64
	// list is how many entries List shows fn before failing.
	list int
	// late makes Put and PutNew leave a goroutine behind that reads their
	// reader once release is closed, and sends the error it got on lateErr.
	late bool
	// midRead makes ReadVersioned call fn with a reader that fails with
	// err after read bytes of the object (instead of failing before fn).
	midRead bool
}

// fake is a local store whose calls fail as scripted, op by op.
type fake struct {
	storage.Store
	mu      sync.Mutex
	faults  map[string][]fault // by op
	calls   map[string]int
	closed  bool
	release chan struct{} // see fault.late
	lateErr chan error
	seeks   []int64 // where PutIfStream's reader stood at each call
}

func newFake(t *testing.T) *fake {
	t.Helper()
	st, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fake{Store: st, faults: map[string][]fault{}, calls: map[string]int{},
		release: make(chan struct{}), lateErr: make(chan error, 1)}
}

// fail scripts faults for the next calls of op.
func (f *fake) fail(op string, faults ...fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[op] = append(f.faults[op], faults...)
}

// failN scripts n transient failures of op.
func (f *fake) failN(op string, n int, err error) {
	for range n {
		f.fail(op, fault{err: err})
	}
}

// next counts a call of op and returns its fault, if one is scripted.
func (f *fake) next(op string) (fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	q := f.faults[op]
	if len(q) == 0 {
		return fault{}, false
	}
	f.faults[op] = q[1:]
	if q[0].hook != nil {
		// Outside the lock: a hook may call the fake's store.
		f.mu.Unlock()
		q[0].hook()
		f.mu.Lock()
	}
	return q[0], !q[0].pass
}

func (f *fake) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *fake) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	if ft, ok := f.next("get"); ok {
		if ft.after {
			f.Store.Get(ctx, p)
		}
		return nil, "", fmt.Errorf("fake: get %s: %w", p, ft.err)
	}
	return f.Store.Get(ctx, p)
}

// ListPage is a page of List's objects (the local store lists no pages).
func (f *fake) ListPage(ctx context.Context, prefix string, max int) ([]storage.Info, bool, error) {
	if ft, ok := f.next("list-page"); ok {
		return nil, false, fmt.Errorf("fake: list-page %s: %w", prefix, ft.err)
	}
	var infos []storage.Info
	err := f.Store.List(ctx, prefix, func(info storage.Info) error {
		infos = append(infos, info)
		return nil
	})
	if len(infos) > max {
		return infos[:max], false, err
	}
	return infos, true, err
}

func (f *fake) Stat(ctx context.Context, p string) (storage.Info, error) {
	if ft, ok := f.next("stat"); ok {
		return storage.Info{}, fmt.Errorf("fake: stat %s: %w", p, ft.err)
	}
	return f.Store.Stat(ctx, p)
}

func (f *fake) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	if ft, ok := f.next("open"); ok {
		return nil, fmt.Errorf("fake: open %s: %w", p, ft.err)
	}
	return f.Store.Open(ctx, p)
}

func (f *fake) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	ft, ok := f.next("list")
	if !ok {
		return f.Store.List(ctx, prefix, fn)
	}
	shown := 0
	errStop := errors.New("stop")
	err := f.Store.List(ctx, prefix, func(info storage.Info) error {
		if shown == ft.list {
			return errStop
		}
		shown++
		return fn(info)
	})
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	return fmt.Errorf("fake: list %q: %w", prefix, ft.err)
}

func (f *fake) Delete(ctx context.Context, p string) error {
	if ft, ok := f.next("delete"); ok {
		if ft.after {
			f.Store.Delete(ctx, p)
		}
		return fmt.Errorf("fake: delete %s: %w", p, ft.err)
	}
	return f.Store.Delete(ctx, p)
}

func (f *fake) Sync(ctx context.Context) error {
	if ft, ok := f.next("sync"); ok {
		return fmt.Errorf("fake: sync: %w", ft.err)
	}
	return f.Store.Sync(ctx)
}

func (f *fake) SweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	if ft, ok := f.next("sweep-temp"); ok {
		return nil, fmt.Errorf("fake: sweep: %w", ft.err)
	}
	return f.Store.SweepTemp(ctx, opts)
}

// Put fails as scripted for its op: "put" (PutReplace), "put-new"
// (PutCreate) or "put-if" (PutIfVersion, see putIf).
func (f *fake) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion {
		return f.putIf(ctx, p, r.(io.ReadSeeker), size, opts)
	}
	return "", f.put(ctx, opts.Mode.Op(), p, r, size, func(ctx context.Context, p string, r io.Reader, size int64) error {
		_, err := f.Store.Put(ctx, p, r, size, opts)
		return err
	})
}

func (f *fake) put(ctx context.Context, op, p string, r io.Reader, size int64,
	put func(context.Context, string, io.Reader, int64) error) error {
	ft, ok := f.next(op)
	if !ok {
		return put(ctx, p, r, size)
	}
	if ft.read > 0 {
		if _, err := io.CopyN(io.Discard, r, ft.read); err != nil {
			return fmt.Errorf("fake: %s %s: read: %w", op, p, err)
		}
	}
	if ft.after {
		if err := put(ctx, p, r, size); err != nil {
			return err
		}
	}
	if ft.late {
		go func() {
			<-f.release
			_, err := r.Read(make([]byte, 1))
			f.lateErr <- err
		}()
	}
	return fmt.Errorf("fake: %s %s: %w", op, p, ft.err)
}

func (f *fake) ReadVersioned(ctx context.Context, p string, fn func(io.Reader) error) (storage.Version, error) {
	ft, ok := f.next("read")
	switch {
	case !ok:
		return f.Store.ReadVersioned(ctx, p, fn)
	case ft.midRead:
		return f.Store.ReadVersioned(ctx, p, func(r io.Reader) error {
			return fn(io.MultiReader(io.LimitReader(r, ft.read), errorReader{ft.err}))
		})
	}
	return "", fmt.Errorf("fake: read %s: %w", p, ft.err)
}

// errorReader fails every Read with err.
type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// putIf records where r stands when the call comes in (seeks), then
// fails as scripted: after reading fault.read bytes of r, or after passing
// the call on (fault.after).
func (f *fake) putIf(ctx context.Context, p string, r io.ReadSeeker, size int64, opts storage.PutOptions) (storage.Version, error) {
	pos, err := r.Seek(0, io.SeekCurrent)
	f.mu.Lock()
	f.seeks = append(f.seeks, pos)
	f.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("fake: put-if %s: where does the reader stand: %w", p, err)
	}
	ft, ok := f.next("put-if")
	if !ok {
		return f.Store.Put(ctx, p, r, size, opts)
	}
	if ft.read > 0 {
		if _, err := io.CopyN(io.Discard, r, ft.read); err != nil {
			return "", fmt.Errorf("fake: put-if %s: read: %w", p, err)
		}
	}
	if ft.after {
		if _, err := f.Store.Put(ctx, p, r, size, opts); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("fake: put-if %s: %w", p, ft.err)
}

func (f *fake) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return f.Store.Close()
}

func (f *fake) String() string { return "fake:" + f.Store.String() }

// sleeper records the waits of a Store instead of waiting.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeper) total() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum time.Duration
	for _, d := range s.waits {
		sum += d
	}
	return sum
}

func (s *sleeper) list() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// retryLog records the OnRetry calls of a Store.
type retryLog struct {
	mu      sync.Mutex
	entries []string
}

func (l *retryLog) onRetry(op, path string, attempt int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, fmt.Sprintf("%s %s #%d", op, path, attempt))
}

func (l *retryLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

// testOptions are fast, deterministic Options: waits are recorded, not
// slept, and the jitter is always one half of the ceiling.
func testOptions(sl *sleeper, log *retryLog) Options {
	return Options{
		Attempts: 4,
		Base:     time.Millisecond,
		Max:      8 * time.Millisecond,
		Budget:   time.Second,
		Sleep:    sl.sleep,
		Rand:     func() float64 { return 0.5 },
		OnRetry:  log.onRetry,
	}
}

// setup returns a fake and a Store wrapping it with testOptions.
func setup(t *testing.T) (*fake, *Store, *sleeper, *retryLog) {
	t.Helper()
	f := newFake(t)
	sl, log := &sleeper{}, &retryLog{}
	return f, New(f, testOptions(sl, log)), sl, log
}
