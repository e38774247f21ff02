// Package lock serialises writers of one destination root. The lock is a
// small object under the reserved name .distributor.lock, taken with an
// exclusive create (storage.Store.PutIf with the zero Version: O_EXCL/link on
// local disk, hardlink on SFTP, If-None-Match: * on S3). The record names
// its holder; the holder renews its lease while it works; a waiter takes over
// a lock whose lease expired or whose holder process is gone (same host).
//
// Takeover is a two-step protocol that is safe on every backend, including
// those whose compare-and-swap is not atomic across processes: a waiter first
// wins an exclusive claim object named after the stale holder's id
// (.distributor.lock.claim-<id>), re-reads the lock to check it still belongs
// to that holder, deletes it and creates its own with an exclusive create.
// Only one waiter can win the claim, and only one can win the create. A
// claim left by a claimer that died is itself stale and is taken over the
// same way (its claim is named after the dead claimer's id).
package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Name is the lock object's path at a destination root.
const Name = ".distributor.lock"

// Info is the lock record.
type Info struct {
	ID        string    `json:"id"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Command   string    `json:"command"`
	Acquired  time.Time `json:"acquired_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

func (i Info) String() string {
	return fmt.Sprintf("%s on host %s, pid %d, since %s (lease until %s)",
		i.Command, i.Host, i.PID, i.Acquired.UTC().Format(time.RFC3339), i.ExpiresAt.UTC().Format(time.RFC3339))
}

// HeldError reports a lock that stayed held until the wait ran out.
type HeldError struct {
	Root   string
	Holder Info
	Waited time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is locked by %s; gave up after waiting %s (see 'distributor unlock --help' if that run is gone)",
		e.Root, e.Holder, e.Waited.Round(time.Second))
}

// ErrLost is the cause of a held lock's context when its lease could not be
// renewed because another process took the lock over.
var ErrLost = errors.New("lock lost: another process took over this root's lock")

// Locker takes the lock of one root.
type Locker struct {
	Store storage.Store
	// Lease is how long a lock stays valid without renewal (default 60s).
	// The holder renews it every Lease/3.
	Lease time.Duration
	// Wait is how long Acquire waits for a held lock (default 2m; 0 waits not at all
	// when NoWait is set).
	Wait   time.Duration
	NoWait bool
	// Poll is the pause between attempts (default 500ms).
	Poll time.Duration
	// Now, Host, PID and Alive describe this process; zero values mean the
	// real clock, os.Hostname, os.Getpid and a kill(pid, 0) probe.
	Now   func() time.Time
	Host  string
	PID   int
	Alive func(pid int) bool
}

func (l *Locker) defaults() {
	if l.Lease <= 0 {
		l.Lease = 60 * time.Second
	}
	if l.Wait <= 0 && !l.NoWait {
		l.Wait = 2 * time.Minute
	}
	if l.Poll <= 0 {
		l.Poll = 500 * time.Millisecond
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	if l.Host == "" {
		l.Host, _ = os.Hostname()
	}
	if l.PID == 0 {
		l.PID = os.Getpid()
	}
	if l.Alive == nil {
		l.Alive = processAlive
	}
}

// processAlive reports whether a process with this pid exists on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Lock is a held lock.
type Lock struct {
	l           *Locker
	info        Info
	mu          sync.Mutex
	releaseOnce sync.Once
	version     storage.Version
	stop        chan struct{}
	done        chan struct{}
	cancel      context.CancelCauseFunc
	ctx         context.Context
}

// Info returns the held lock's record.
func (k *Lock) Info() Info { return k.info }

// Context is cancelled (with ErrLost as the cause) if the lease cannot be
// renewed because the lock was taken over. Writers use it for their I/O.
func (k *Lock) Context() context.Context { return k.ctx }

// Acquire takes the lock for command, waiting while another live holder has
// it. It starts a goroutine that renews the lease until Release.
func (l *Locker) Acquire(ctx context.Context, command string) (*Lock, error) {
	l.defaults()
	id := make([]byte, 12)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("lock id: %w", err)
	}
	now := l.Now()
	info := Info{ID: hex.EncodeToString(id), Host: l.Host, PID: l.PID, Command: command,
		Acquired: now.UTC().Truncate(time.Second), ExpiresAt: now.Add(l.Lease).UTC().Truncate(time.Second)}
	// The wait is measured on the real monotonic clock; Now only stamps records.
	start := time.Now()
	var last Info
	for {
		v, err := l.tryAcquire(ctx, &info)
		if err == nil {
			return l.hold(ctx, info, v), nil
		}
		var held *heldNow
		if !errors.As(err, &held) {
			return nil, err
		}
		last = held.info
		if l.NoWait || time.Since(start) >= l.Wait {
			return nil, &HeldError{Root: l.Store.String(), Holder: last, Waited: time.Since(start)}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the lock of %s held by %s: %w", l.Store.String(), last, ctx.Err())
		case <-time.After(l.Poll):
		}
	}
}

type heldNow struct{ info Info }

func (h *heldNow) Error() string { return "held by " + h.info.String() }

// tryAcquire makes one attempt: create the lock, or find it ours (a retried
// create whose first attempt succeeded), or take over a stale one.
func (l *Locker) tryAcquire(ctx context.Context, info *Info) (storage.Version, error) {
	info.ExpiresAt = l.Now().Add(l.Lease).UTC().Truncate(time.Second)
	data, _ := json.Marshal(info)
	return l.grab(ctx, Name, data, info.ID, 0)
}

// maxClaimDepth bounds nested takeovers (a claimer that died while taking
// over, whose claim is itself taken over, ...).
const maxClaimDepth = 4

// grab creates the object name exclusively with data. If it exists and
// belongs to a stale holder, grab first wins the claim object
// name+".claim-"+holder (recursively: a claim left by a dead claimer is
// itself taken over the same way), checks that name still belongs to that
// holder, deletes it and creates it again exclusively.
func (l *Locker) grab(ctx context.Context, name string, data []byte, ourID string, depth int) (storage.Version, error) {
	v, err := l.Store.PutIf(ctx, name, data, "")
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, storage.ErrPrecondition) {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	cur, curV, err := readInfo(ctx, l.Store, name)
	if errors.Is(err, storage.ErrNotExist) {
		return "", &heldNow{info: Info{Command: "(released just now)"}} // try again
	}
	if err != nil {
		return "", err
	}
	if cur.ID == ourID {
		return curV, nil // our own create succeeded, the answer was lost
	}
	if !l.stale(cur) || depth >= maxClaimDepth {
		return "", &heldNow{info: cur}
	}
	claim := name + ".claim-" + safeID(cur.ID)
	if _, err := l.grab(ctx, claim, data, ourID, depth+1); err != nil {
		var held *heldNow
		if errors.As(err, &held) {
			return "", &heldNow{info: cur} // another waiter is taking over
		}
		return "", fmt.Errorf("claim stale %s: %w", name, err)
	}
	defer l.Store.Delete(context.WithoutCancel(ctx), claim)
	again, againV, err := readInfo(ctx, l.Store, name)
	switch {
	case errors.Is(err, storage.ErrNotExist):
	case err != nil:
		return "", err
	case again.ID != cur.ID || againV != curV:
		return "", &heldNow{info: again}
	default:
		if err := l.Store.Delete(ctx, name); err != nil {
			return "", fmt.Errorf("remove stale %s of %s: %w", name, cur, err)
		}
	}
	v, err = l.Store.PutIf(ctx, name, data, "")
	if errors.Is(err, storage.ErrPrecondition) {
		now, _, _ := readInfo(ctx, l.Store, name)
		return "", &heldNow{info: now}
	}
	if err != nil {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	return v, nil
}

// Stale reports whether a lock record may be taken over: its lease expired,
// or its holder ran on this host and that process is gone.
func (l *Locker) Stale(cur Info) bool {
	l.defaults()
	return l.stale(cur)
}

// stale reports whether a holder's lock (or claim) may be taken over.
func (l *Locker) stale(cur Info) bool {
	if l.Now().After(cur.ExpiresAt) {
		return true
	}
	return cur.Host == l.Host && cur.PID != l.PID && !l.Alive(cur.PID)
}

func safeID(id string) string {
	return strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, id)
}

// Read returns the current lock record, or an error matching
// storage.ErrNotExist when the root is not locked.
func Read(ctx context.Context, st storage.Store) (Info, storage.Version, error) {
	return readInfo(ctx, st, Name)
}

func readInfo(ctx context.Context, st storage.Store, name string) (Info, storage.Version, error) {
	data, v, err := st.Get(ctx, name)
	if err != nil {
		return Info{}, "", err
	}
	var info Info
	if err := json.Unmarshal(data, &info); err != nil {
		// An unreadable record is treated as expired long ago, so it can be
		// taken over rather than blocking the root forever.
		return Info{ID: "unreadable", Command: "unreadable lock record"}, v, nil
	}
	return info, v, nil
}

func (l *Locker) read(ctx context.Context) (Info, storage.Version, error) {
	return Read(ctx, l.Store)
}

func (l *Locker) hold(parent context.Context, info Info, v storage.Version) *Lock {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	k := &Lock{l: l, info: info, version: v, stop: make(chan struct{}), done: make(chan struct{}), cancel: cancel, ctx: ctx}
	go k.renewLoop()
	return k
}

func (k *Lock) renewLoop() {
	defer close(k.done)
	t := time.NewTicker(k.l.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-t.C:
			if err := k.Renew(k.ctx); errors.Is(err, ErrLost) {
				k.cancel(ErrLost)
				return
			}
		}
	}
}

// Renew extends the lease. It fails with ErrLost if the lock is no longer
// this holder's.
func (k *Lock) Renew(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	cur, curV, err := Read(ctx, k.l.Store)
	if err != nil {
		if errors.Is(err, storage.ErrNotExist) {
			return ErrLost
		}
		return err
	}
	if cur.ID != k.info.ID {
		return ErrLost
	}
	info := k.info
	info.ExpiresAt = k.l.Now().Add(k.l.Lease).UTC().Truncate(time.Second)
	data, _ := json.Marshal(info)
	v, err := k.l.Store.PutIf(ctx, Name, data, curV)
	if errors.Is(err, storage.ErrPrecondition) {
		return ErrLost
	}
	if err != nil {
		return fmt.Errorf("renew lock: %w", err)
	}
	k.info, k.version = info, v
	return nil
}

// Release stops renewal and removes the lock if it is still this holder's.
// Calling it again does nothing.
func (k *Lock) Release(ctx context.Context) error {
	first := false
	k.releaseOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	close(k.stop)
	<-k.done
	k.cancel(errors.New("lock released"))
	k.mu.Lock()
	defer k.mu.Unlock()
	cur, _, err := Read(ctx, k.l.Store)
	if errors.Is(err, storage.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("release lock: %w", err)
	}
	if cur.ID != k.info.ID {
		return nil // taken over: not ours to remove
	}
	if err := k.l.Store.Delete(ctx, Name); err != nil {
		return fmt.Errorf("release lock: %w", err)
	}
	return nil
}
