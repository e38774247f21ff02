package txn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
)

// attempt is one Apply in progress.
type attempt struct {
	t  *Txn
	ch *Change
	// written and deleted hold the paths whose write or delete returned
	// success (filled by each's ok); started those whose request went out
	// (a write or delete never started changed nothing: settle skips it).
	written, deleted map[string]bool
	mu               sync.Mutex
	started          map[string]bool
	// catalogUnsure: the catalog write failed other than by precondition; it may have landed.
	catalogUnsure bool
	// staged holds, by write index, the staged writes not committed or aborted.
	staged []storage.Staged
}

// start records that the write or delete of p is about to go out.
func (a *attempt) start(p string) {
	a.mu.Lock()
	a.started[p] = true
	a.mu.Unlock()
}

// done lists, sorted, the paths whose write or delete returned success.
func (a *attempt) done() []string {
	out := slices.AppendSeq(slices.Collect(maps.Keys(a.written)), maps.Keys(a.deleted))
	slices.Sort(out)
	return out
}

// The writes of an attempt: staged and committed, or put one by one.

// stage stages write k under the fence (send), into a.staged. On failure
// the caller aborts every staged write (unstaged).
func (a *attempt) stage(ctx context.Context, k int) error {
	w := &a.ch.Writes[k]
	return a.send(ctx, w, func(r io.Reader) (err error) {
		a.staged[k], err = a.t.st.Stage(ctx, w.Path, r, w.Size, w.putOptions()) // (nil on error)
		return err
	})
}

// writeAll makes the writes visible phase by phase, under the fence, into
// a.written: it commits the staged ones, or puts each (send). On failure
// it aborts the staged writes not yet committed.
func (a *attempt) writeAll(ctx context.Context) error {
	t, ch := a.t, a.ch
	for _, phase := range phases(ch.Writes) {
		err := t.each(ctx, len(phase), func(ctx context.Context, i int) error {
			w := &ch.Writes[phase[i]]
			if a.staged == nil {
				return a.send(ctx, w, func(r io.Reader) error {
					a.start(w.Path)
					_, err := t.st.Put(ctx, w.Path, r, w.Size, w.putOptions())
					return err
				})
			}
			if err := t.lk.Fence(); err != nil {
				return err
			}
			a.start(w.Path)
			if err := a.staged[phase[i]].Commit(ctx); err != nil {
				return fmt.Errorf("write %s: %w", w.Path, err)
			}
			a.staged[phase[i]] = nil // committed: not to abort
			return nil
		}, func(i int) { a.written[ch.Writes[phase[i]].Path] = true })
		if err != nil {
			if a.staged != nil && t.lk.Fence() == nil {
				// (A writer that lost its lock changes nothing more: the next
				// holder sweeps the temporary files.)
				a.abortStaged()
			}
			return err
		}
	}
	return nil
}

// abortStaged removes uncommitted staged writes, returning paths whose temporary stays.
func (a *attempt) abortStaged() []string {
	t := a.t
	ctx, cancel := t.cleanupContext()
	defer cancel()
	var left []string
	for i, sg := range a.staged {
		if sg == nil {
			continue
		}
		if err := sg.Abort(ctx); err != nil {
			t.opts.Logger.Warn("remove a staged temporary file", "root", t.st.String(), "path", a.ch.Writes[i].Path, "err", err)
			left = append(left, a.ch.Writes[i].Path)
		}
		a.staged[i] = nil
	}
	return left
}

// unstaged ends an Apply whose staging failed: nothing became visible, so
// nothing is undone or recorded. The staged files are removed and the
// directories written to swept; if that fails the journal stays so that
// the next writer sweeps the whole tree.
func (a *attempt) unstaged(cause error) (*Result, error) {
	t := a.t
	res := &Result{}
	if ferr := t.lk.Fence(); ferr != nil {
		return res, &FencedError{Cause: cause, Fence: ferr,
			Then: "made no output visible and no further change, not even removing its temporary files: " +
				"the lock's next holder settles the root from this run's intent journal"}
	}
	left := a.abortStaged()
	if cutShort(cause) && t.st.Properties().Remote {
		// A staging request cut short may still land on a remote server
		// after this, as a temporary file: the journal stays, so that the
		// next writer sweeps the whole tree.
		res.JournalKept = true
		return res, fmt.Errorf("%w; no output was made visible; the root keeps its intent journal (requests cut short may still "+
			"land as temporary files): the next run, prune --apply or reconcile-state on it sweeps them", cause)
	}
	// A stage that failed with its connection may have left its
	// temporary file out of its own cleanup's reach.
	ctx, cancel := t.cleanupContext()
	defer cancel()
	if _, err := t.sweep(ctx, storage.SweepOptions{Dirs: dirsOf(a.ch.Writes)}); err != nil {
		res.JournalKept = true
		return res, fmt.Errorf("%w; no output was made visible; temporary files could not be swept (%v; %d staged write(s) "+
			"could not be undone): the root keeps its intent journal, so the next writer sweeps them", cause, err, len(left))
	}
	t.dropJournal()
	return res, fmt.Errorf("%w; no output was made visible (every write was staged under a temporary name and removed again)", cause)
}

// send opens w's content and writes it with write (a Put or a Stage),
// under the fence, and reports it to Change.Written.
func (a *attempt) send(ctx context.Context, w *Write, write func(io.Reader) error) error {
	if err := a.t.lk.Fence(); err != nil {
		return err
	}
	rc, err := w.Open(ctx)
	if err != nil {
		return fmt.Errorf("open content of %s: %w", w.Path, err)
	}
	defer rc.Close()
	if err := write(rc); err != nil {
		return fmt.Errorf("write %s: %w", w.Path, err)
	}
	if a.ch.Written != nil {
		a.ch.Written(w.Path, w.Size)
	}
	return nil
}

// cutShort reports whether err is a cancellation's: the requests it cut
// short may still land on a remote server.
func cutShort(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// sync makes the batch of writes durable before a catalog records it.
func (t *Txn) sync(ctx context.Context) error {
	if err := t.st.Sync(ctx); err != nil {
		return fmt.Errorf("sync %s: %w", t.st, err)
	}
	return nil
}

// each runs fn for items 0..n-1 on up to Jobs goroutines and calls ok, one
// call at a time, for each item fn completed; every fn must check the
// fence before its change. After the first error it starts no new item and
// returns that error once those in flight are done: it does not cancel
// them, since a cancelled request may still complete on a server and the
// cleanup must know what landed. Only ctx (a signal, a fence) cancels them.
func (t *Txn) each(ctx context.Context, n int, fn func(context.Context, int) error, ok func(int)) error {
	var (
		g      errgroup.Group // not WithContext: a failure cancels nothing
		mu     sync.Mutex
		failed atomic.Bool
		next   atomic.Int64
	)
	// Jobs workers take the next item until none is left: no goroutine or
	// hand-off per item, which many small files pay for in wake-ups (bench/run
	// cold, P9). Before an item they only check storage.Cancelled(ctx): fn
	// checks the fence itself, and ctx.Err would read its clock once more.
	for range min(t.opts.Jobs, n) {
		g.Go(func() error {
			for i := int(next.Add(1) - 1); i < n && !failed.Load() && storage.Cancelled(ctx) == nil; i = int(next.Add(1) - 1) {
				if err := fn(ctx, i); err != nil {
					failed.Store(true)
					return err
				}
				mu.Lock()
				ok(i)
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return withCause(ctx, ctx.Err())
}

// withCause adds to err, of work that ctx cut short, why ctx ended (a
// signal, a lapsed lease, a lost lock), unless err says it already.
func withCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(err, cause) {
		return fmt.Errorf("%w (%w)", err, cause)
	}
	return err
}

// phases groups ws's indexes by Write.Phase, lowest first, keeping their order within a phase.
func phases(ws []Write) [][]int {
	byPhase := map[int][]int{}
	for i, w := range ws {
		byPhase[w.Phase] = append(byPhase[w.Phase], i)
	}
	var out [][]int
	for _, p := range slices.Sorted(maps.Keys(byPhase)) {
		out = append(out, byPhase[p])
	}
	return out
}

// dirsOf returns the distinct parent directories of the written paths, sorted.
func dirsOf(ws []Write) []string {
	seen := map[string]bool{}
	for _, w := range ws {
		d := path.Dir(w.Path)
		if d == "." {
			d = ""
		}
		seen[d] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// Summarise writes at most max paths of a list, then a count of the rest.
func Summarise(paths []string, max int) string {
	if len(paths) <= max {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:max], ", "), len(paths)-max)
}

// settle runs after a failure. It removes the files this attempt provably
// created, records the writes and deletes it cannot undo in a truthful
// catalog, sweeps its directories' temporary files and drops the journal
// only when nothing is left in doubt. It stops at once if the fence lapsed,
// and gives up (keeping the journal) after Options.CleanupTimeout, or
// InterruptedCleanup after the caller's context is done.
func (a *attempt) settle(cause error) (*Result, error) {
	t := a.t
	res := &Result{}
	if ferr := t.lk.Fence(); ferr != nil {
		return res, &FencedError{Cause: cause, Fence: ferr,
			Then: "made no further change, not even a rollback: the lock's next holder settles the root from this run's intent journal"}
	}
	ctx, cancel := t.cleanupContext()
	defer cancel()
	var doubts []string // why the journal must stay
	doubt := func(format string, args ...any) { doubts = append(doubts, fmt.Sprintf(format, args...)) }
	for p := range a.started {
		if !a.written[p] && !a.deleted[p] && cutShort(cause) && t.st.Properties().Remote {
			// A request that went out without success may still land.
			doubt("requests cut short may still land") // the next writer looks
			break
		}
	}

	paths := map[string]bool{}
	for i := range a.ch.Writes {
		if !a.ch.Writes[i].Existed {
			paths[a.ch.Writes[i].Path] = true
		}
	}
	curV, curSum, recorded, err := currentCatalog(ctx, t.st, paths)
	if err != nil {
		return a.giveUp(res, cause, fmt.Errorf("re-read %s: %w", catalog.FileName, err))
	}
	if curV != a.ch.Base {
		if a.catalogUnsure && a.ch.Final != nil && t.catalogSum != "" && curSum == t.catalogSum {
			// The catalog write landed; only its answer was lost.
			res.Committed = true
			res.Done = a.done()
			t.dropJournal()
			return res, nil
		}
		return a.giveUp(res, cause, fmt.Errorf("%s changed since this run read it (another writer?)", catalog.FileName))
	}
	done, err := a.settleWrites(ctx, res, recorded, doubt)
	if err != nil {
		return a.giveUp(res, cause, err)
	}
	done = append(done, a.settleDeletes(ctx, doubt)...)
	sort.Strings(done)
	if err := t.sync(ctx); err != nil {
		doubt("%v", err)
	}
	if a.ch.Partial != nil && len(done) > 0 {
		if c := a.ch.Partial(done); c != nil {
			if err := t.writeCatalog(ctx, c, a.ch); err != nil {
				return a.giveUp(res, cause, fmt.Errorf("record partial result: %w", err))
			}
		}
	}
	res.Done = done
	if len(a.ch.Writes) > 0 {
		if _, err := t.sweep(ctx, storage.SweepOptions{Dirs: dirsOf(a.ch.Writes)}); err != nil {
			doubt("temporary files: %v", err)
		}
	}
	msg := a.outcome(res)
	if len(doubts) == 0 && t.lk.Fence() == nil {
		t.dropJournal()
	} else {
		res.JournalKept = true
		msg += "; the root keeps its intent journal (" + Summarise(doubts, 3) +
			"): the next run, prune --apply or reconcile-state on it recovers it"
	}
	return res, fmt.Errorf("%w; %s", cause, msg)
}

// settleWrites removes the new files that hold this run's bytes (unless
// the catalog records the path: recorded) and returns the writes that cannot be
// undone, to record. What it cannot account for goes to res.Left and doubt.
// An error is the fence's: the caller gives up.
func (a *attempt) settleWrites(ctx context.Context, res *Result, recorded map[string]*catalog.Output, doubt func(string, ...any)) ([]string, error) {
	t := a.t
	var done []string
	for i := range a.ch.Writes {
		w := &a.ch.Writes[i]
		if !a.started[w.Path] {
			continue // never sent: nothing of it landed
		}
		if a.written[w.Path] && w.Existed {
			done = append(done, w.Path) // a replace cannot be undone: record it
			continue
		}
		sum, size, err := HashObject(ctx, t.st, w.Path)
		mine := err == nil && sum == w.SHA256 && size == w.Size
		switch {
		case errors.Is(err, storage.ErrNotExist):
			// nothing landed (or a replace's old bytes are gone: nothing to record)
		case err != nil:
			res.Left = append(res.Left, Leftover{w.Path, fmt.Sprintf("could not be checked: %v", err)})
			doubt("%s could not be checked", w.Path)
		case w.Existed:
			if mine {
				done = append(done, w.Path) // the replace landed, its answer was lost
			} else if w.Previous != nil && (sum != w.Previous.SHA256 || size != w.Previous.Size) {
				res.Left = append(res.Left, Leftover{w.Path, "holds neither the old nor this run's bytes"})
				doubt("%s holds neither the old nor the new bytes", w.Path)
			}
		case !mine:
			res.Left = append(res.Left, Leftover{w.Path, "its bytes are not the ones this run wrote: left alone"})
		case recorded[w.Path] != nil:
			// A recorded path whose file was missing: this run's bytes are
			// there now, so record them rather than delete anything the
			// catalog names.
			done = append(done, w.Path)
		default:
			if err := t.lk.Fence(); err != nil {
				return nil, err
			}
			if err := t.st.Delete(ctx, w.Path); err != nil {
				res.Left = append(res.Left, Leftover{w.Path, fmt.Sprintf("could not be removed: %v", err)})
				done = append(done, w.Path) // it exists with this run's bytes: record it
				continue
			}
			res.RolledBack = append(res.RolledBack, w.Path)
		}
	}
	return done, nil
}

// settleDeletes returns the deletes that took effect, checking unanswered ones.
func (a *attempt) settleDeletes(ctx context.Context, doubt func(string, ...any)) []string {
	var done []string
	for _, p := range a.ch.Deletes {
		if a.deleted[p] {
			done = append(done, p)
		} else if a.started[p] {
			switch _, err := a.t.st.Stat(ctx, p); {
			case errors.Is(err, storage.ErrNotExist) && !errors.Is(err, storage.ErrNotObject):
				done = append(done, p)
			case err != nil:
				doubt("%s could not be checked", p)
			}
		}
	}
	return done
}

// giveUp ends a cleanup that cannot go on: the journal stays.
func (a *attempt) giveUp(res *Result, cause, why error) (*Result, error) {
	res.JournalKept = a.t.lk.Fence() == nil
	then := "the lock's next holder settles the root from this run's intent journal"
	if res.JournalKept {
		then = "the root keeps its intent journal: the next run, prune --apply or reconcile-state on it recovers it"
	}
	return res, fmt.Errorf("%w; cleanup stopped (%v); %s; %s", cause, why, a.outcome(res), then)
}

// outcome summarises what the cleanup did, in one bounded line.
func (a *attempt) outcome(res *Result) string {
	s := fmt.Sprintf("rolled back %d created file(s), recorded %d completed change(s)", len(res.RolledBack), len(res.Done))
	if len(res.Left) > 0 {
		paths := make([]string, len(res.Left))
		for i, l := range res.Left {
			paths[i] = l.Path
		}
		s += fmt.Sprintf(", left %d in place (%s: %s)", len(res.Left), Summarise(paths, 3), res.Left[0].Reason)
	}
	return s
}

// FencedError is the failure of a transaction that, after Cause, can no
// longer prove it holds the root's lock (Fence matches lock.ErrLost or
// lock.ErrLeaseLapsed), so it stopped changing the root; Then says what
// it did and left (spec section 6).
type FencedError struct {
	Cause, Fence error
	Then         string
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("%v; this process can no longer prove it holds the root's lock (%v), so it %s", e.Cause, e.Fence, e.Then)
}

// Unwrap returns Cause and Fence.
func (e *FencedError) Unwrap() []error { return []error{e.Cause, e.Fence} }

// Split returns Cause and the statement about the lock with the fence's
// error in brief, for a short report line that shortens the cause but
// keeps the statement whole (report.Brief).
func (e *FencedError) Split() (cause error, note string) {
	switch {
	case errors.Is(e.Fence, lock.ErrLost):
		note = lock.ErrLost.Error() + ", so this process "
	case errors.Is(e.Fence, lock.ErrLeaseLapsed):
		note = lock.ErrLeaseLapsed.Error() + ", so it "
	default:
		note = fmt.Sprintf("this process can no longer prove it holds the root's lock (%v), so it ", e.Fence)
	}
	return e.Cause, note + e.Then
}

// InterruptedCleanup bounds what a transaction still does once its
// caller's context is done (a signal): its cleanup and the release of the
// lock end this long after, even on a server that stopped answering, so
// that a signal ends a run within seconds rather than after the store's
// timeouts and retries. What is left stays for the next writer, which
// recovers the root from the intent journal.
const InterruptedCleanup = 3 * time.Second

// bounded returns base bounded by timeout (none when 0) and cancelled
// InterruptedCleanup after the caller's context is done, before or while
// the work runs.
func (t *Txn) bounded(base context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancelCause := context.WithCancelCause(base)
	cancelTimeout := func() {}
	if timeout > 0 {
		ctx, cancelTimeout = context.WithTimeout(ctx, timeout)
	}
	// The timer waits for the interruption, which sets it.
	timer := time.AfterFunc(math.MaxInt64, func() {
		cancelCause(fmt.Errorf("the run was interrupted: its cleanup stopped %v later, leaving the rest to the next writer", InterruptedCleanup))
	})
	stop := context.AfterFunc(t.parent, func() { timer.Reset(time.Until(t.interrupted())) })
	return ctx, func() {
		stop()
		timer.Stop() // the work ended first: no timer outlives it
		cancelTimeout()
		cancelCause(nil)
	}
}

// cleanupContext is a cleanup's: the lock's (the caller's may be done),
// bounded by CleanupTimeout and the interruption.
func (t *Txn) cleanupContext() (context.Context, context.CancelFunc) {
	return t.bounded(t.lk.Context(), t.opts.CleanupTimeout)
}
