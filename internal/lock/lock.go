// Package lock serialises writers of one destination root and fences them
// (docs/design.md, "Fencing", has the reasoning and the defaults).
//
// The lock is the object .distributor.lock, created exclusively
// (storage.PutIf with the zero Version). Its record names the holder and
// its lease; the holder renews it every Lease/4, and every renewal changes
// the record (a counter), so a record that stops changing belongs to a
// holder that stopped renewing.
//
// Fencing: a holder may change the root only while its lease, counted on
// its own monotonic clock from the start of its last successful renewal,
// less a margin of Lease/4, has not run out (Lock.Fence, Lock.Bind). A
// failed renewal never moves that deadline.
//
// Takeover: a waiter never trusts another machine's wall clock. It takes a
// lock over after watching the record stay unchanged (same version) for
// the holder's lease plus SkewAllowance on its own monotonic clock, or at
// once when the holder ran on this host and its process is gone. Safe also
// where compare-and-swap is not atomic across processes: the waiter first
// wins an exclusive claim (.distributor.lock.claim-<holder id>; a dead
// claimer's is taken over the same way), re-reads the lock to check it is
// the record it watched, deletes it and creates its own exclusively.
package lock

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/distributor-dev/distributor/internal/backoff"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/storage"
)

// Name is the lock object's path at a destination root.
const Name = ".distributor.lock"

// Defaults of a Locker (see docs/design.md for the reasoning).
const (
	DefaultLease         = 60 * time.Second
	DefaultSkewAllowance = 30 * time.Second
	DefaultWait          = 2 * time.Minute
	DefaultPoll          = 500 * time.Millisecond
)

// Info is the lock record.
type Info struct {
	ID       string    `json:"id"`
	Host     string    `json:"host"`
	PID      int       `json:"pid"`
	Command  string    `json:"command"`
	Acquired time.Time `json:"acquired_at"`
	// ExpiresAt is the holder's wall-clock view of its lease's end, for
	// operators and `distributor unlock`; takeover never trusts it.
	ExpiresAt time.Time `json:"expires_at"`
	LeaseMS   int64     `json:"lease_ms,omitempty"` // the holder's lease in milliseconds
	// Renewals counts the holder's renewals: every renewal changes the
	// record, so waiters can tell a live holder from a silent one.
	Renewals int64 `json:"renewals,omitempty"`
	// Intent, when set, is the holder's intent journal, carried instead of
	// .distributor.journal (docs/design.md, "The 10-request design").
	// Whoever else removes the record moves it to the journal first
	// (MoveIntent).
	Intent json.RawMessage `json:"intent,omitempty"`
}

func (i Info) String() string {
	return fmt.Sprintf("%s on host %s, pid %d, since %s (lease until %s)",
		i.Command, i.Host, i.PID, i.Acquired.UTC().Format(time.RFC3339), i.ExpiresAt.UTC().Format(time.RFC3339))
}

// lease returns the holder's lease, or def when the record does not say.
func (i Info) lease(def time.Duration) time.Duration {
	return cmp.Or(time.Duration(max(i.LeaseMS, 0))*time.Millisecond, def)
}

// HeldError reports a lock that stayed held until the wait ran out.
type HeldError struct {
	Root   string
	Holder Info
	Waited time.Duration
	// Silent is how long this waiter had seen the record unchanged when the
	// wait ended (0: it changed at the last look); RenewEvery, how often the
	// holder changes it; TakeoverAfter, how long it must stay unchanged
	// before a waiter takes it over.
	Silent, RenewEvery, TakeoverAfter time.Duration
	// ExpiredByHolderClock: the record's wall-clock lease end is past by this clock.
	ExpiredByHolderClock bool
}

func (e *HeldError) Error() string {
	msg := fmt.Sprintf("%s is locked by %s; gave up after waiting %s", e.Root, e.Holder, e.Waited.Round(time.Second))
	switch {
	case e.Silent > 0:
		msg += fmt.Sprintf(" (this run saw its record unchanged for the last %s; the holder changes it every %s when it renews, "+
			"and a waiting run takes the lock over after watching it unchanged for %s)",
			e.Silent.Round(time.Second), e.RenewEvery.Round(time.Second), e.TakeoverAfter.Round(time.Second))
	case e.ExpiredByHolderClock:
		msg += fmt.Sprintf(" (its lease looks expired by the holder's clock, but a run trusts no other host's clock: "+
			"with --lock-timeout longer than %s it watches the lock and takes it over if it stays unchanged)", e.TakeoverAfter.Round(time.Second))
	}
	return msg + "; if that run is gone, 'distributor unlock' removes the lock (see 'distributor unlock --help')"
}

// ErrLost is the cause of a held lock's context when its lease could not be
// renewed because another process took the lock over.
var ErrLost = errors.New("lock lost: another process took over this root's lock")

// ErrLeaseLapsed is the cause of a held lock's context when the holder could
// not renew its lease in time (a pause, a partition, a stalled server): it
// no longer knows that it holds the lock and must not change the root.
var ErrLeaseLapsed = errors.New("lock lease lapsed: this process could not renew its lock in time")

// Locker takes the lock of one root.
type Locker struct {
	Store storage.Store
	// Lease is how long a lock stays valid without renewal (default 60s).
	// The holder renews it every Lease/4 and stops changing the root
	// Lease/4 before it would run out.
	Lease time.Duration
	// SkewAllowance is how much longer than the holder's lease a waiter
	// watches a silent record before taking it over (default 30s): for
	// clock-rate differences, request delays and scheduling, on top of the
	// holder's own margin.
	SkewAllowance time.Duration
	// Wait is how long Acquire waits for a held lock (default 2m; with
	// NoWait, Acquire does not wait).
	Wait   time.Duration
	NoWait bool
	// Poll is the pause between attempts (default 500ms, at most Lease/8).
	Poll time.Duration
	// OnWait, when set, is told when Acquire starts waiting for another
	// holder, then every waitReportEvery: the record, waited and limit.
	OnWait func(holder Info, waited, limit time.Duration)
	// Now stamps records (default time.Now); Mono measures leases and
	// silences (default SystemClock). Host, PID and Alive describe this
	// process (default os.Hostname, os.Getpid, a probe of a local pid).
	Now   func() time.Time
	Mono  MonoClock
	Host  string
	PID   int
	Alive func(pid int) bool
	// Intent is the intent journal Acquire's record carries (Info.Intent).
	Intent []byte
}

func (l *Locker) defaults() {
	l.Lease = cmp.Or(max(l.Lease, 0), DefaultLease) // (zero or negative: the default)
	l.SkewAllowance = cmp.Or(max(l.SkewAllowance, 0), DefaultSkewAllowance)
	if l.Wait <= 0 && !l.NoWait {
		l.Wait = DefaultWait
	}
	l.Poll = cmp.Or(max(l.Poll, 0), min(DefaultPoll, l.Lease/8))
	if l.Now == nil {
		l.Now = time.Now
	}
	if l.Mono == nil {
		l.Mono = SystemClock
	}
	if l.Host == "" {
		l.Host, _ = os.Hostname()
	}
	l.PID = cmp.Or(l.PID, os.Getpid())
	if l.Alive == nil {
		l.Alive = processAlive
	}
}

// margin is how long before its lease runs out a holder stops.
func (l *Locker) margin() time.Duration { return l.Lease / 4 }

// takeoverAfter is how long a waiter watches holder's silent record before takeover.
func (l *Locker) takeoverAfter(holder Info) time.Duration {
	return max(holder.lease(l.Lease), l.Lease) + l.SkewAllowance
}

// watch remembers, per object name, the version a waiter saw and since
// when (on its monotonic clock).
type watch map[string]sighting

type sighting struct {
	version storage.Version
	since   time.Duration
}

// silence records a sighting of v at name in w; it returns how long it is unchanged.
func (l *Locker) silence(w watch, name string, v storage.Version) time.Duration {
	now := l.Mono()
	if s, ok := w[name]; ok && s.version == v {
		return now - s.since
	}
	w[name] = sighting{v, now}
	return 0
}

// Acquire takes the lock for command, waiting while another holder has it.
// It starts a goroutine that renews the lease until Release.
func (l *Locker) Acquire(ctx context.Context, command string) (*Lock, error) {
	l.defaults()
	id := make([]byte, 12)
	rand.Read(id) // (it never fails)
	info := Info{ID: hex.EncodeToString(id), Host: l.Host, PID: l.PID, Command: command,
		Acquired: l.Now().UTC().Truncate(time.Second), LeaseMS: l.Lease.Milliseconds(), Intent: l.Intent}
	w := watch{}
	// The wait is measured on Go's monotonic clock; Mono measures silences.
	start := time.Now()
	reported, lastReport := -1, time.Duration(0)
	for {
		sent := l.Mono()
		// Create the lock, or find it ours (a retried create whose first
		// attempt succeeded), or take a stale one over.
		v, err := l.grab(ctx, Name, l.record(&info), info.ID, w, 0)
		if err == nil {
			return l.hold(ctx, info, v, sent), nil
		}
		held, ok := errors.AsType[*HeldError](err)
		if !ok {
			return nil, err
		}
		waited := time.Since(start)
		if l.OnWait != nil && !l.NoWait && waited < l.Wait && (reported < 0 || waited-lastReport >= waitReportEvery(l.Wait)) {
			l.OnWait(held.Holder, waited, l.Wait)
			reported, lastReport = reported+1, waited
		}
		if l.NoWait || waited >= l.Wait {
			held.Root, held.Waited, held.RenewEvery = l.Store.String(), waited, held.Holder.lease(l.Lease)/4
			held.TakeoverAfter = l.takeoverAfter(held.Holder)
			held.ExpiredByHolderClock = !held.Holder.ExpiresAt.IsZero() && l.Now().After(held.Holder.ExpiresAt)
			return nil, held
		}
		if backoff.Sleep(ctx, l.Poll) != nil {
			return nil, fmt.Errorf("waiting for the lock of %s held by %s: %w", l.Store.String(), held.Holder, context.Cause(ctx))
		}
	}
}

// record stamps info's lease end (Lease from now) and encodes it.
func (l *Locker) record(info *Info) []byte {
	info.ExpiresAt = l.Now().Add(l.Lease).UTC().Truncate(time.Second)
	data, _ := json.Marshal(info)
	return data
}

// maxClaimDepth bounds nested takeovers (a claimer that died while taking
// over, whose claim is itself taken over, ...).
const maxClaimDepth = 4

// grab creates the object name exclusively with data. If a stale holder
// has it, grab first wins the claim name+".claim-"+holder (recursively),
// checks that name is still the record it watched, deletes it and creates
// it again exclusively. A holder to wait for is a *HeldError naming it and
// its silence (Acquire completes it).
func (l *Locker) grab(ctx context.Context, name string, data []byte, ourID string, w watch, depth int) (storage.Version, error) {
	switch v, err := storage.PutIf(ctx, l.Store, name, data, ""); {
	case err == nil:
		return v, nil
	case !errors.Is(err, storage.ErrPrecondition):
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	cur, curV, err := readInfo(ctx, l.Store, name)
	switch {
	case errors.Is(err, storage.ErrNotExist):
		return "", &HeldError{Holder: Info{Command: "(released just now)"}} // try again
	case err != nil:
		return "", err
	case cur.ID == ourID:
		return curV, nil // our own create succeeded, the answer was lost
	}
	silent := l.silence(w, name, curV)
	if !(l.goneHere(cur) || silent >= l.takeoverAfter(cur)) || depth >= maxClaimDepth {
		return "", &HeldError{Holder: cur, Silent: silent}
	}
	claim := name + ".claim-" + safeID(cur.ID)
	if _, err := l.grab(ctx, claim, data, ourID, w, depth+1); err != nil {
		if _, ok := errors.AsType[*HeldError](err); ok {
			return "", &HeldError{Holder: cur, Silent: silent} // another waiter is taking over
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
		return "", &HeldError{Holder: again}
	default:
		// The stale holder's intent is the next holder's to recover: it
		// goes to the journal before the record goes (a claim's intent is
		// of a waiter that changed nothing).
		if depth == 0 {
			if err := MoveIntent(ctx, l.Store, again); err != nil {
				return "", fmt.Errorf("take over stale %s of %s: %w", name, cur, err)
			}
		}
		if err := l.Store.Delete(ctx, name); err != nil {
			return "", fmt.Errorf("remove stale %s of %s: %w", name, cur, err)
		}
	}
	v, err := storage.PutIf(ctx, l.Store, name, data, "")
	switch {
	case errors.Is(err, storage.ErrPrecondition):
		now, _, _ := readInfo(ctx, l.Store, name)
		return "", &HeldError{Holder: now}
	case err != nil:
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	return v, nil
}

// MoveIntent creates the root's journal exclusively from the intent rec
// carries, if any, for the lock's next holder to recover; call it before
// removing a record one does not hold. A journal that exists wins: rec's
// holder had not finished recovering it (and started no change), or wrote
// it for a later change too large for its record.
func MoveIntent(ctx context.Context, st storage.Store, rec Info) error {
	if len(rec.Intent) == 0 {
		return nil
	}
	_, err := storage.PutIf(ctx, st, journal.Name, rec.Intent, "")
	if err != nil && !errors.Is(err, storage.ErrPrecondition) {
		return fmt.Errorf("move the intent of %s to %s: %w", rec, journal.Name, err)
	}
	return nil
}

// goneHere reports whether cur's holder ran on this host and its process is gone.
func (l *Locker) goneHere(cur Info) bool {
	return cur.Host == l.Host && cur.PID != l.PID && cur.PID > 0 && !l.Alive(cur.PID)
}

// Stale reports whether an operator may remove a lock record without
// watching it (`distributor unlock`): its holder ran on this host and is
// gone, or its wall-clock lease ended over SkewAllowance ago. Writers
// never use this rule: it trusts the holder's clock.
func (l *Locker) Stale(cur Info) bool {
	l.defaults()
	return l.goneHere(cur) || l.Now().After(cur.ExpiresAt.Add(l.SkewAllowance))
}

// safeID is id with every character but ASCII letters and digits made "_".
func safeID(id string) string { return unsafeInID.ReplaceAllString(id, "_") }

var unsafeInID = regexp.MustCompile(`[^a-zA-Z0-9]`)

// Read returns the lock record, or an error matching storage.ErrNotExist.
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
		// An unreadable (e.g. still empty) record is watched like any
		// other: it is taken over only after it stayed unchanged for a
		// lease plus the allowance.
		return Info{ID: "unreadable", Command: "unreadable lock record"}, v, nil
	}
	return info, v, nil
}

// waitReportEvery is how often a long wait is reported again: at most about ten lines in all.
func waitReportEvery(wait time.Duration) time.Duration {
	return max(30*time.Second, wait/10)
}

// processStart anchors goClock, set once at start-up.
var processStart = time.Now()

// goClock is Go's monotonic clock as a duration since the process started.
func goClock() time.Duration { return time.Since(processStart) }

// MonoClock reads a monotonic clock: only differences between two readings
// mean anything. Fencing and stale-lock decisions use it, never the wall
// clock, so neither a wrong nor a stepped system clock can fool them.
type MonoClock func() time.Duration

// SystemClock is the default MonoClock: CLOCK_BOOTTIME on Linux (it counts
// time spent suspended), Go's monotonic clock elsewhere.
func SystemClock() time.Duration { return bootClock() }
