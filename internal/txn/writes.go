// The writes of an attempt: staged and committed, or put one by one.

package txn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/distributor-dev/distributor/internal/storage"
)

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

// summarise writes at most max paths of a list, then a count of the rest.
func summarise(paths []string, max int) string {
	if len(paths) <= max {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:max], ", "), len(paths)-max)
}
