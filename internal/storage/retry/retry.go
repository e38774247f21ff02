// Package retry wraps a storage.Store to retry the operations that are safe
// to repeat after a transient failure (storage.Store.IsTransient), with
// exponential backoff and full jitter, bounded by attempts per call and by a
// retry budget of waiting over all calls. Retrying a failed operation is
// this wrapper's policy, never an adapter's (beyond what its client library
// does for one request, such as minio-go's resends).
//
// What is retried:
//
//   - Get, Stat, ListPage (its page is returned whole or not at all),
//     Delete (deleting a missing object is not an error), Sync and
//     SweepTemp (removing temporary files twice is harmless).
//   - Open: the call that opens the object only. A stream that fails
//     mid-way is not resumed: its Read returns the error.
//   - List and ReadVersioned: only an attempt that failed before it called
//     fn, which would see the entries or the object again; fn's own error
//     is returned.
//   - Put (PutReplace, PutCreate) and Stage: only when the reader can be
//     replayed: it implements io.Seeker (the retry seeks back to where it
//     was when Put was called), or no byte has been read from it yet. A
//     failure of the reader itself is never retried. When a PutCreate
//     retry meets storage.ErrPrecondition after an attempt that sent all
//     of its bytes, that attempt may have landed with its answer lost: the
//     object is read back, and if its bytes are those the call sent, Put
//     succeeds.
//   - Put with PutIfVersion: after a transient failure the object is read
//     back (comparing its SHA-256 and size with the content's): if it
//     holds the content, the write landed and Put returns its Version; if
//     not and the condition still holds the write is sent again, the
//     reader rewound to its start; otherwise Put fails with an error
//     matching storage.ErrPrecondition. A storage.ErrPrecondition from a
//     later attempt is checked the same way (the first attempt may have
//     landed late).
//
// When a read-back cannot tell what happened (it fails for good, or the
// limits run out), a conditional Put fails with an error that does not
// match storage.ErrPrecondition and says that the outcome is unknown.
// Identical bytes written by someone else are indistinguishable from this
// call's own: a conditional Put then reports success, which leaves the
// store in the state the caller asked for.
//
// A call never retries once its context is done (a context bound to a
// lock's fence is done once the fence lapses), and returns the context's
// error wrapping the last failure. The other methods pass through.
package retry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distributor-dev/distributor/internal/backoff"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Options configure a Store. Zero (or negative) fields take their default.
type Options struct {
	// Attempts bounds the tries of one call: the call gives up after this
	// many transient failures (the read-backs of conditional Puts count).
	// Default 4; 1 disables retries.
	Attempts int
	// Base is the backoff ceiling before the first retry; it doubles with
	// each retry of the same call, up to Max. The wait is drawn uniformly
	// between 0 and the ceiling (full jitter). Default 250ms.
	Base time.Duration
	Max  time.Duration // caps the backoff ceiling; default 5s
	// Budget is the total time the Store may wait between attempts, over
	// all its calls: once spent, a destination that keeps failing fails
	// the run instead of stretching it. Default 30s.
	Budget time.Duration
	// Sleep waits d, or until ctx is done (then it returns an error).
	// Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns the jitter, in [0, 1) (default math/rand/v2's Float64);
	// the Store calls it under its lock.
	Rand func() float64
	// OnRetry, when set, is called before each wait with the operation
	// ("get", "put", "put-new", "put-if", "list", ...), its path (List's
	// prefix; "" for Sync and SweepTemp), the number of the attempt that
	// failed (from 1) and its error. It may be called concurrently.
	OnRetry func(op, path string, attempt int, err error)
}

// Defaults of Options.
const (
	DefaultAttempts = 4
	DefaultBase     = 250 * time.Millisecond
	DefaultMax      = 5 * time.Second
	DefaultBudget   = 30 * time.Second
)

// Store is a storage.Store that retries the calls of the Store it wraps.
// It is safe for concurrent use by multiple goroutines.
type Store struct {
	storage.Store
	opts Options

	mu      sync.Mutex // guards waited and opts.Rand
	waited  time.Duration
	retries atomic.Int64
}

var _ storage.Store = (*Store)(nil)

// New wraps st.
func New(st storage.Store, opts Options) *Store {
	opts.Attempts = cmp.Or(max(opts.Attempts, 0), DefaultAttempts) // (zero or negative: the default)
	opts.Base = cmp.Or(max(opts.Base, 0), DefaultBase)
	opts.Max = max(cmp.Or(max(opts.Max, 0), DefaultMax), opts.Base)
	opts.Budget = cmp.Or(max(opts.Budget, 0), DefaultBudget)
	if opts.Sleep == nil {
		opts.Sleep = backoff.Sleep
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	return &Store{Store: st, opts: opts}
}

// Retries returns how many attempts (read-backs included) the Store sent
// after a transient failure, over all calls.
func (s *Store) Retries() int { return int(s.retries.Load()) }

// Unwrap returns the wrapped Store.
func (s *Store) Unwrap() storage.Store { return s.Store }

// Count returns the Retries of the first *Store in st's chain of wrapped
// Stores (Unwrap() storage.Store), or 0 if there is none.
func Count(st storage.Store) int {
	for {
		switch s := st.(type) {
		case *Store:
			if s == nil {
				return 0
			}
			return s.Retries()
		case interface{ Unwrap() storage.Store }:
			st = s.Unwrap()
		default: // (nil too)
			return 0
		}
	}
}

// reserve takes the wait before retry k (from 1) from the budget, or is false.
func (s *Store) reserve(k int) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	left := s.opts.Budget - s.waited
	if left <= 0 {
		return 0, false
	}
	d := min(backoff.Policy{Base: s.opts.Base, Max: s.opts.Max, Jitter: s.opts.Rand}.Wait(k), left)
	s.waited += d
	return d, true
}

type call struct {
	s        *Store
	ctx      context.Context
	op, path string
	failed   int   // transient failures so far
	last     error // the last of them
}

// again records the transient failure err and waits before the next
// attempt; non-nil is the error to return (context done, limits spent).
func (c *call) again(err error) error {
	c.failed++
	c.last = err
	if c.ctx.Err() != nil {
		return c.stopped()
	}
	if c.failed >= c.s.opts.Attempts {
		if c.s.opts.Attempts == 1 {
			return err
		}
		return fmt.Errorf("%w (gave up after %d attempts)", err, c.failed)
	}
	d, ok := c.s.reserve(c.failed)
	if !ok {
		return fmt.Errorf("%w (not retried: the retry budget of %s is spent; %d attempts)", err, c.s.opts.Budget, c.failed)
	}
	if fn := c.s.opts.OnRetry; fn != nil {
		fn(c.op, c.path, c.failed, err)
	}
	serr := c.s.opts.Sleep(c.ctx, d)
	if c.ctx.Err() != nil {
		return c.stopped()
	}
	if serr != nil {
		return fmt.Errorf("%w (not retried: wait: %v)", err, serr)
	}
	c.s.retries.Add(1)
	return nil
}

// final returns err, a failure not to retry, noting the earlier failures
// if any (not wrapped: the call failed with err, not with them).
func (c *call) final(err error) error {
	if c.failed == 0 {
		return err
	}
	return fmt.Errorf("%w (attempt %d; attempt %d failed with: %v)", err, c.failed+1, c.failed, c.last)
}

// stopped is the context's error, with its cause when that says more (a
// lapsed fence), wrapping the failure it cut off.
func (c *call) stopped() error {
	err := c.ctx.Err()
	if errors.Is(c.last, err) {
		return c.last // the attempt saw the context end
	}
	if cause := context.Cause(c.ctx); cause != nil && !errors.Is(cause, err) {
		err = fmt.Errorf("%w: %w", err, cause)
	}
	return fmt.Errorf("%w (not retried; attempt %d failed with: %w)", err, c.failed, c.last)
}

// do runs attempt until it succeeds, fails for good or the limits run out.
// attempt sets *called once it hands the caller's fn data (List,
// ReadVersioned): such a failed attempt is not retried, since fn would see
// the data again, and its error is returned as is.
func (s *Store) do(ctx context.Context, op, path string, attempt func(called *bool) error) error {
	c := &call{s: s, ctx: ctx, op: op, path: path}
	for {
		called := false
		err := attempt(&called)
		switch {
		case err == nil || called:
			return err
		case !s.IsTransient(err):
			return c.final(err)
		}
		if err := c.again(err); err != nil {
			return err
		}
	}
}

// retried is do for a call with one result, the zero value on failure.
func retried[T any](s *Store, ctx context.Context, op, path string, attempt func() (T, error)) (T, error) {
	var v T
	err := s.do(ctx, op, path, func(*bool) (err error) {
		v, err = attempt()
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// Get implements storage.Store.
func (s *Store) Get(ctx context.Context, path string) (data []byte, v storage.Version, err error) {
	err = s.do(ctx, "get", path, func(*bool) (err error) {
		data, v, err = s.Store.Get(ctx, path)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return data, v, nil
}

// ReadVersioned implements storage.Store, retrying only an attempt that
// failed before it called fn.
func (s *Store) ReadVersioned(ctx context.Context, path string, fn func(io.Reader) error) (v storage.Version, err error) {
	err = s.do(ctx, "read", path, func(called *bool) (err error) {
		v, err = s.Store.ReadVersioned(ctx, path, func(r io.Reader) error {
			*called = true
			return fn(r)
		})
		return err
	})
	if err != nil {
		return "", err
	}
	return v, nil
}

// Open implements storage.Store: only opening is retried.
func (s *Store) Open(ctx context.Context, path string) (io.ReadCloser, error) {
	return retried(s, ctx, "open", path, func() (io.ReadCloser, error) { return s.Store.Open(ctx, path) })
}

// Stat implements storage.Store.
func (s *Store) Stat(ctx context.Context, path string) (storage.Info, error) {
	return retried(s, ctx, "stat", path, func() (storage.Info, error) { return s.Store.Stat(ctx, path) })
}

// List implements storage.Store, retrying only an attempt that did not call fn.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return s.do(ctx, "list", prefix, func(called *bool) error {
		return s.Store.List(ctx, prefix, func(info storage.Info) error {
			*called = true
			return fn(info)
		})
	})
}

// ListPage implements storage.Store.
func (s *Store) ListPage(ctx context.Context, prefix string, max int) (infos []storage.Info, complete bool, err error) {
	err = s.do(ctx, "list-page", prefix, func(*bool) (err error) {
		infos, complete, err = s.Store.ListPage(ctx, prefix, max)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return infos, complete, nil
}

// Delete implements storage.Store.
func (s *Store) Delete(ctx context.Context, path string) error {
	return s.do(ctx, "delete", path, func(*bool) error { return s.Store.Delete(ctx, path) })
}

// Sync implements storage.Store.
func (s *Store) Sync(ctx context.Context) error {
	return s.do(ctx, "sync", "", func(*bool) error { return s.Store.Sync(ctx) })
}

// SweepTemp implements storage.Store, returning what the last attempt found.
func (s *Store) SweepTemp(ctx context.Context, opts storage.SweepOptions) (found []string, err error) {
	err = s.do(ctx, "sweep-temp", "", func(*bool) (err error) {
		found, err = s.Store.SweepTemp(ctx, opts)
		return err
	})
	return found, err
}
