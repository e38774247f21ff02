// The held lock: renewal, the fence, the proof of exclusion and release.

package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/probe"
)

// Lock is a held lock.
type Lock struct {
	l        *Locker
	released atomic.Bool
	keep     atomic.Bool // see KeepIntent
	// stopRenewal ends the renewal loop and waits for it (idempotent).
	stopRenewal func()
	ctx         context.Context
	cancel      context.CancelCauseFunc

	mu         sync.Mutex
	info       Info
	version    storage.Version
	validUntil time.Duration // on l.Mono: start of the last good renewal + Lease - margin
	lost       error         // sticky: ErrLost or ErrLeaseLapsed (wrapped)
	timer      *time.Timer
	renewing   sync.Mutex // serialises Renew
}

// Info returns the held lock's record.
func (k *Lock) Info() Info {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.info
}

// Context is cancelled, with ErrLost or ErrLeaseLapsed (wrapped) as its
// cause, when this process can no longer prove that it holds the lock. Its
// Err checks the fence synchronously.
func (k *Lock) Context() context.Context { return &fencedCtx{Context: k.ctx, k: k, cancel: k.cancel} }

// Bind returns a context for work under the lock, cancelled when parent
// is or when the fence lapses. Its Err checks the fence at every call, so
// a process paused past its lease sees it at its first check, before any
// timer fires. Call stop when the work is done.
func (k *Lock) Bind(parent context.Context) (ctx context.Context, stop func()) {
	inner, cancel := context.WithCancelCause(parent)
	after := context.AfterFunc(k.ctx, func() { cancel(context.Cause(k.ctx)) })
	return &fencedCtx{Context: inner, k: k, cancel: cancel}, func() {
		after()
		cancel(context.Canceled)
	}
}

// fencedCtx is a context whose Err first checks the lock's fence.
type fencedCtx struct {
	context.Context
	k      *Lock
	cancel context.CancelCauseFunc
}

func (c *fencedCtx) Err() error {
	if err := c.k.Fence(); err != nil {
		c.cancel(err)
	}
	return c.Context.Err()
}

// Fence returns nil while this process provably holds the lock: the lease
// it last renewed, less the margin, has not run out on its monotonic clock
// and no renewal found the lock taken over. Otherwise it returns an error
// matching ErrLeaseLapsed or ErrLost, for good: a lock that lapsed once is
// never trusted again. Every change to the root needs a nil Fence first.
func (k *Lock) Fence() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.fenceLocked()
}

func (k *Lock) fenceLocked() error {
	if k.lost != nil {
		return k.lost
	}
	if now := k.l.Mono(); now >= k.validUntil {
		k.lost = fmt.Errorf("%w (no successful renewal for %s; lease %s, safety margin %s)",
			ErrLeaseLapsed, (now - k.validUntil + k.l.Lease - k.l.margin()).Round(time.Millisecond), k.l.Lease, k.l.margin())
		k.cancel(k.lost)
		return k.lost
	}
	return nil
}

func (l *Locker) hold(parent context.Context, info Info, v storage.Version, sent time.Duration) *Lock {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	k := &Lock{l: l, info: info, version: v, cancel: cancel, ctx: ctx, validUntil: sent + l.Lease - l.margin()}
	k.timer = time.AfterFunc(k.validUntil-l.Mono(), func() { k.Fence() })
	stop, done := make(chan struct{}), make(chan struct{})
	k.stopRenewal = sync.OnceFunc(func() { close(stop); <-done })
	go k.renewLoop(stop, done)
	return k
}

func (k *Lock) renewLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(k.l.Lease / 4)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if k.Fence() != nil {
				return
			}
			// A renewal may take at most what is left of the lease: a
			// stalled request must not outlive the fence.
			k.mu.Lock()
			left := k.validUntil - k.l.Mono()
			k.mu.Unlock()
			rctx, cancel := context.WithTimeout(k.ctx, max(left, time.Millisecond))
			err := k.Renew(rctx)
			cancel()
			if errors.Is(err, ErrLost) {
				return
			}
		}
	}
}

// Renew extends the lease. It fails with ErrLost if the lock is no longer
// this holder's, and with the fence's error once the lease lapsed.
func (k *Lock) Renew(ctx context.Context) error { return k.renew(ctx, nil) }

// SetIntent renews the lease with a record that carries intent (nil:
// none) instead: the holder's change differs from the one it locked with.
// Like every change of the root it is fenced: it fails as Renew does.
func (k *Lock) SetIntent(ctx context.Context, intent []byte) error {
	return k.renew(ctx, func(i *Info) { i.Intent = intent })
}

// KeepIntent tells Release that the record's intent is still needed (the
// change is not settled): Release moves it to the journal first.
func (k *Lock) KeepIntent() { k.keep.Store(true) }

func (k *Lock) renew(ctx context.Context, edit func(*Info)) error {
	k.renewing.Lock()
	defer k.renewing.Unlock()
	if err := k.Fence(); err != nil {
		return err
	}
	sent := k.l.Mono()
	cur, curV, err := Read(ctx, k.l.Store)
	info := k.Info()
	switch {
	case errors.Is(err, storage.ErrNotExist), err == nil && cur.ID != info.ID:
		return k.end(ErrLost)
	case err != nil:
		return fmt.Errorf("renew lock: %w", err)
	}
	info.Renewals++
	if edit != nil {
		edit(&info)
	}
	v, err := storage.PutIf(ctx, k.l.Store, Name, k.l.record(&info), curV)
	if errors.Is(err, storage.ErrPrecondition) {
		return k.end(ErrLost) // another process holds the lock now
	}
	if err != nil {
		return fmt.Errorf("renew lock: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.fenceLocked(); err != nil {
		return err // lapsed while renewing: too late
	}
	k.info, k.version = info, v
	k.validUntil = sent + k.l.Lease - k.l.margin()
	k.timer.Reset(k.validUntil - k.l.Mono())
	return nil
}

// ProveExclusion proves, on the held lock object, that the server enforces
// the conditional writes the lock and the catalog's compare-and-swap rest on
// (probe.Object; readBack nil: a Get). The refused writes carry this
// holder's record with a "probe" marker, so that on a server that applies
// them anyway the record still names this holder and Release removes it.
// Call it right after Acquire; an unenforcing server gives *probe.UnenforcedError.
func (k *Lock) ProveExclusion(ctx context.Context, readBack probe.ReadBack) error {
	k.renewing.Lock() // no renewal changes the record meanwhile
	defer k.renewing.Unlock()
	k.mu.Lock()
	info, v := k.info, k.version
	k.mu.Unlock()
	own, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("lock record: %w", err)
	}
	return probe.Object(ctx, k.l.Store, Name, own, v, func(tag string) []byte {
		data, _ := json.Marshal(struct {
			Info
			Probe string `json:"probe"`
		}{info, tag})
		return data
	}, readBack)
}

// ErrReleased is the fence's error after Release.
var ErrReleased = errors.New("lock released")

// end ends the lock's validity for good (with err unless it lapsed) and returns err.
func (k *Lock) end(err error) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lost == nil {
		k.lost = err
	}
	k.cancel(k.lost)
	return err
}

// Release stops renewal and removes the lock if this process still provably
// holds it: a holder whose fence lapsed leaves the record (it may be a
// successor's by now) for waiters to take over. A kept intent (KeepIntent)
// is moved to the journal first; if that fails, the record stays for a
// waiter to take over and move it. Calling Release again does nothing.
func (k *Lock) Release(ctx context.Context) error {
	if k.released.Swap(true) {
		return nil
	}
	k.stopRenewal()
	k.renewing.Lock()
	defer k.renewing.Unlock()
	defer k.end(ErrReleased)
	k.timer.Stop()
	if k.Fence() != nil {
		return nil
	}
	// The fence is checked before each change (it never comes back).
	switch cur, _, err := Read(ctx, k.l.Store); {
	case errors.Is(err, storage.ErrNotExist), err == nil && cur.ID != k.Info().ID: // taken over: not ours to remove
		return nil
	case err != nil:
		return fmt.Errorf("release lock: %w", err)
	case k.keep.Load() && k.Fence() == nil:
		if err := MoveIntent(ctx, k.l.Store, cur); err != nil {
			return fmt.Errorf("release lock: %w (the lock stays: the next writer takes it over and recovers the intent)", err)
		}
	}
	if k.Fence() != nil {
		return nil
	}
	if err := k.l.Store.Delete(ctx, Name); err != nil {
		return fmt.Errorf("release lock: %w", err)
	}
	return nil
}
