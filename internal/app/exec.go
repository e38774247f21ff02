package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/distributor-dev/distributor/internal/journal"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/storage"
)

// Progress receives transfer events for a display. Implementations must be
// safe for concurrent use: Done is called from transfer goroutines.
type Progress interface {
	// Start announces a destination's writes: how many files and bytes.
	Start(destination string, files int, bytes int64)
	// Done reports one completed write.
	Done(destination, path string, bytes int64)
	// Finish ends the destination's display, whatever happened.
	Finish(destination string)
}

// Content opens the bytes of a planned write.
type Content func(ctx context.Context, it plan.Item) (io.ReadCloser, error)

// Executor applies one destination's plan to its store: writes outputs,
// then deletes, then writes the catalog last with compare-and-swap against
// the version read before planning. On failure it removes the files this
// attempt created and writes a catalog that records exactly what happened,
// so every record names a file that exists with its sha256 and size.
type Executor struct {
	Store   storage.Store
	Logger  *slog.Logger
	Version storage.Version // catalog version read before planning ("" = absent)
	// Jobs is how many writes or deletes run at once (default 1).
	Jobs int
	// Progress, when set, is told about every write; Name labels it.
	Progress Progress
	Name     string
	// RunID and Command identify the attempt in its intent journal.
	RunID   string
	Command string
	// baseVersion is the version the journal records.
	baseVersion storage.Version
}

// Apply applies p, planned from in. It returns nil when every item and the
// catalog were written.
func (e *Executor) Apply(ctx context.Context, in plan.Input, p *plan.Plan, content Content) error {
	if p.Catalog == nil {
		return nil // skip_same, fail_*: nothing to write
	}
	e.baseVersion = e.Version
	if err := e.writeJournal(ctx, in, p); err != nil {
		return err // nothing was changed yet
	}
	var done []plan.Item
	var created []plan.Item
	fail := func(err error) error {
		return e.settle(in, p, done, created, err)
	}
	writes := p.Writes()
	if e.Progress != nil {
		var total int64
		for _, it := range writes {
			total += it.Output.Size
		}
		e.Progress.Start(e.Name, len(writes), total)
		defer e.Progress.Finish(e.Name)
	}
	err := e.each(ctx, writes, func(ctx context.Context, it plan.Item) error {
		if err := e.put(ctx, it, content); err != nil {
			return err
		}
		if e.Progress != nil {
			e.Progress.Done(e.Name, it.Path, it.Output.Size)
		}
		return nil
	}, func(it plan.Item) {
		if it.Op == plan.OpCreate {
			created = append(created, it)
		} else {
			done = append(done, it)
		}
	})
	if err != nil {
		return fail(err)
	}
	err = e.each(ctx, p.Deletes(), func(ctx context.Context, it plan.Item) error {
		if err := e.Store.Delete(ctx, it.Path); err != nil {
			return fmt.Errorf("delete %s: %w", it.Path, err)
		}
		return nil
	}, func(it plan.Item) { done = append(done, it) })
	if err != nil {
		return fail(err)
	}
	if err := e.sync(ctx); err != nil {
		return fail(err)
	}
	if err := e.writeCatalog(ctx, p.Catalog); err != nil {
		return fail(err)
	}
	e.dropJournal(ctx)
	return nil
}

// sync makes the batch of writes durable before a catalog records it, on
// stores that defer that work (storage.Syncer).
func (e *Executor) sync(ctx context.Context) error {
	if sy, ok := e.Store.(storage.Syncer); ok {
		if err := sy.Sync(ctx); err != nil {
			return fmt.Errorf("sync %s: %w", e.Store, err)
		}
	}
	return nil
}

// writeJournal records the plan's writes and deletes before the first change,
// so that recovery can settle the root if this process dies.
func (e *Executor) writeJournal(ctx context.Context, in plan.Input, p *plan.Plan) error {
	now := in.Now.UTC().Truncate(time.Second)
	j := &journal.Journal{RunID: e.RunID, Command: e.Command, Started: now, BaseVersion: string(e.baseVersion)}
	for _, it := range p.Items {
		switch it.Op {
		case plan.OpCreate, plan.OpOverwrite:
			r := plan.Record(in, it, now)
			j.Ops = append(j.Ops, journal.Op{Op: journal.OpWrite, Path: it.Path, Existed: it.Op == plan.OpOverwrite,
				SHA256: it.Output.SHA256, Size: it.Output.Size, Record: &r})
		case plan.OpDelete:
			j.Ops = append(j.Ops, journal.Op{Op: journal.OpDelete, Path: it.Path})
		}
	}
	data, err := journal.Encode(j)
	if err != nil {
		return err
	}
	if _, err := e.Store.PutIf(ctx, journal.Name, data, ""); err != nil {
		return fmt.Errorf("write %s: %w", journal.Name, err)
	}
	return nil
}

// dropJournal removes the journal once the root is settled. If that fails the
// next writer finds the catalog committed and only removes the journal.
func (e *Executor) dropJournal(ctx context.Context) {
	if err := e.Store.Delete(context.WithoutCancel(ctx), journal.Name); err != nil {
		e.Logger.Warn("remove journal", "root", e.Store.String(), "err", err)
	}
}

// each runs fn for every item on up to e.Jobs goroutines and calls ok, one
// call at a time, for each item fn completed. After the first error it
// starts no new item, waits for those in flight, and returns that error.
func (e *Executor) each(ctx context.Context, items []plan.Item, fn func(context.Context, plan.Item) error, ok func(plan.Item)) error {
	jobs := e.Jobs
	if jobs < 1 {
		jobs = 1
	}
	// The first failure stops new items but does not cancel those in
	// flight: a cancelled request may still complete on a server after the
	// client gave up, and the rollback must know what landed. Only the
	// caller's ctx (Ctrl-C) cancels in-flight work.
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, jobs)
		stop     = make(chan struct{})
	)
loop:
	for _, it := range items {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break loop
		case <-stop:
			break loop
		}
		select {
		case <-stop:
			<-sem
			break loop
		default:
		}
		wg.Add(1)
		go func(it plan.Item) {
			defer wg.Done()
			defer func() { <-sem }()
			err := ctx.Err()
			if err == nil {
				err = fn(ctx, it)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
					close(stop)
				}
				return
			}
			ok(it)
		}(it)
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

func (e *Executor) put(ctx context.Context, it plan.Item, content Content) error {
	rc, err := content(ctx, it)
	if err != nil {
		return fmt.Errorf("open content of %s: %w", it.Path, err)
	}
	defer rc.Close()
	if err := e.Store.Put(ctx, it.Path, rc, it.Output.Size); err != nil {
		return fmt.Errorf("write %s: %w", it.Path, err)
	}
	return nil
}

func (e *Executor) writeCatalog(ctx context.Context, c *catalog.Catalog) error {
	data, err := catalog.Encode(c)
	if err != nil {
		return err
	}
	v, err := e.Store.PutIf(ctx, catalog.FileName, data, e.Version)
	if err != nil {
		if errors.Is(err, storage.ErrPrecondition) {
			return fmt.Errorf("write %s: it changed since this run read it (another writer?): %w", catalog.FileName, err)
		}
		return fmt.Errorf("write %s: %w", catalog.FileName, err)
	}
	e.Version = v
	return nil
}

// settle runs after a failure: it removes files this attempt created, keeps
// (and records) writes it cannot undo, and writes the catalog that describes
// the root truthfully. It uses a fresh context so that a cancelled run still
// cleans up.
func (e *Executor) settle(in plan.Input, p *plan.Plan, done, created []plan.Item, cause error) error {
	ctx := context.WithoutCancel(context.Background())
	errs := []error{cause}
	settled := true
	known := make(map[string]bool, len(created))
	for _, it := range created {
		known[it.Path] = true
	}
	// Every path this plan creates is removed, not only the writes known to
	// have completed: a write whose answer was lost (a cancelled request the
	// server still finished) may have landed. The paths did not exist when
	// the plan was made, and no one else writes under the lock.
	for _, it := range p.Writes() {
		if it.Op != plan.OpCreate {
			continue
		}
		if err := e.Store.Delete(ctx, it.Path); err != nil {
			errs = append(errs, fmt.Errorf("roll back %s: %w", it.Path, err))
			if known[it.Path] {
				// It exists with its bytes: record it so no file is left
				// unrecorded.
				done = append(done, it)
			} else {
				settled = false // unknown: leave it to recovery
			}
			continue
		}
		if known[it.Path] {
			e.Logger.Debug("rolled back created file", "path", it.Path)
		}
	}
	// A replace whose answer was lost may have landed too: look, and record
	// the new bytes if they are there.
	doneSet := make(map[string]bool, len(done))
	for _, it := range done {
		doneSet[it.Path] = true
	}
	for _, it := range p.Writes() {
		if it.Op != plan.OpOverwrite || doneSet[it.Path] {
			continue
		}
		sum, size, err := hashObject(ctx, e.Store, it.Path)
		switch {
		case err != nil:
			settled = false // cannot tell: leave it to recovery
		case sum == it.Output.SHA256 && size == it.Output.Size:
			done = append(done, it)
		case it.Previous != nil && (sum != it.Previous.SHA256 || size != it.Previous.Size):
			settled = false // neither old nor new bytes: leave it to recovery
		}
	}
	settled = settled && len(errs) == 1
	if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		// Requests cut short by cancellation may still land on a remote
		// server after this: keep the journal so the next writer looks.
		settled = false
	}
	if err := e.sync(ctx); err != nil {
		errs = append(errs, err)
		settled = false
	}
	if c := plan.Settle(in, p, done); c != nil {
		if err := e.writeCatalog(ctx, c); err != nil {
			errs = append(errs, fmt.Errorf("record partial result: %w", err))
			settled = false
		}
	}
	if settled {
		e.dropJournal(ctx)
	} else {
		errs = append(errs, fmt.Errorf("the root was left with its intent journal: the next run or maintenance command on it recovers it"))
	}
	return errors.Join(errs...)
}
