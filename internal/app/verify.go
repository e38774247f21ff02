package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// VerifyOptions are the inputs of Verify.
type VerifyOptions struct {
	Root
	// AllOwners verifies every owner's outputs at the root.
	AllOwners bool
	// Jobs is how many outputs are read and hashed at once (0: the
	// backend's default).
	Jobs int
	// Quick checks only each output's listed size, reading no content:
	// blind to changes that keep the size (bitrot, an in-place edit).
	Quick   bool
	Logger  *slog.Logger
	OnEvent func(Event)
}

// Verify is a read-only bitrot check, taking no lock: it compares each selected
// output's sha256 and size with its record, opts.Jobs at a time; lists are in
// catalog order. The error is for invalid options; the rest is reported.
func (a *App) Verify(ctx context.Context, cfg *config.Config, opts VerifyOptions) (*report.Verify, error) {
	t, err := resolveMaint(cfg, "verify", opts.Root)
	if err != nil {
		return nil, err
	}
	rep := &report.Verify{Target: t.head, AllOwners: opts.AllOwners, Quick: opts.Quick,
		Missing: []report.Record{}, Corrupt: []report.VerifyCorrupt{}, TempFiles: []string{}}
	fail := func(err error) (*report.Verify, error) { a.maintFailed(&rep.Failure, t, err); return rep, nil }
	m, _, err := a.openMaintRoot(ctx, t, false)
	if m != nil {
		defer m.close()
		rep.Root, rep.State, rep.Warnings, rep.RecoveryPending = m.store.String(), string(m.state.Status), m.warnings, m.pending
	}
	if err != nil {
		return fail(err)
	}
	// Report (never remove: verify holds no lock) temporary files.
	temps, err := m.store.SweepTemp(ctx, storage.SweepOptions{DryRun: true})
	if err != nil {
		return fail(fmt.Errorf("look for temporary files: %w", err))
	}
	rep.TempFiles = append(rep.TempFiles, temps...)
	if m.cat == nil {
		// Most likely a mistyped root, which must not pass for a healthy one.
		return fail(noCatalogError(ctx, m.store, m.pending))
	}
	if err := a.audit(ctx, t, m, opts, rep); err != nil {
		return fail(fmt.Errorf("verify: %w", err))
	}
	for _, cr := range rep.Corrupt {
		a.Logger.Info("corrupt output", "path", cr.Path, "expected", cr.Expected, "actual", cr.Actual)
	}
	return rep, nil
}

// noCatalogError is verify's failure on state none: it says whether anything
// is there and asks if another path was meant, or that a pending recovery comes first.
func noCatalogError(ctx context.Context, st storage.Store, pending bool) error {
	if pending {
		return fmt.Errorf("no catalog (%s) found at %s yet: a dead run's intent journal is pending there, so nothing was verified; "+
			"one `distributor run` (or `distributor reconcile-state`) on this destination recovers the root, then run verify again",
			catalog.FileName, st)
	}
	what := "which is empty or does not exist"
	errFound := errors.New("found")
	err := st.List(ctx, "", func(i storage.Info) error {
		if strings.HasPrefix(path.Base(strings.TrimSuffix(i.Path, "/")), ".distributor") {
			return nil // reserved names: a lock, a temporary file
		}
		return errFound
	})
	switch {
	case errors.Is(err, errFound):
		what = "which holds files but none that distributor published"
	case err != nil:
		what = "which could not be listed"
	}
	return fmt.Errorf("no catalog (%s) found at %s, %s: nothing is managed there, so there is nothing to verify; "+
		"did you mean another path? (check the destination's path, --pipeline and --destination, or publish first with `distributor run`)",
		catalog.FileName, st, what)
}

// audit checks the selected records against storage (with opts.Quick, the
// listing) into rep; with a.OnEvent, a first pass counts what there is to check.
func (a *App) audit(ctx context.Context, t *maintTarget, m *maintRoot, opts VerifyOptions, rep *report.Verify) error {
	keep := ownedBy(t.owner, opts.AllOwners)
	var checked func(path string, read int64)
	if a.OnEvent != nil {
		name := "verify " + t.owner.PipelineID + " -> " + t.owner.DestinationID
		files, bytes := 0, int64(0)
		err := m.cat.each(ctx, func(o *catalog.Output) error {
			if keep(o) {
				files++
				if !opts.Quick {
					bytes += o.Size
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		a.OnEvent(Event{Kind: EventStart, Task: name, Files: files, Bytes: bytes})
		checked = func(path string, read int64) {
			a.OnEvent(Event{Kind: EventDone, Task: name, Path: path, Bytes: read})
		}
		defer a.OnEvent(Event{Kind: EventFinish, Task: name})
	}
	records := func(fn func(o *catalog.Output, l *storage.Info) error) error {
		visit := func(o *catalog.Output, l *storage.Info) error {
			if o == nil || !keep(o) {
				return nil
			}
			return fn(o, l)
		}
		if opts.Quick {
			return mergeListing(ctx, m.store, m.cat, visit)
		}
		return m.cat.each(ctx, func(o *catalog.Output) error { return visit(o, nil) })
	}
	return auditStream(ctx, m.store, records, opts.Quick, jobsFor(t.dest.Backend, opts.Jobs), checked, rep)
}

// ReconcileOptions are the inputs of ReconcileState.
type ReconcileOptions struct {
	Root
	// AllOwners checks every owner's records, not just the selected one's.
	AllOwners bool
	// DryRun reports without rewriting the catalog.
	DryRun bool
	Logger *slog.Logger
	Tuning
}

// ReconcileState drops the records whose file was removed behind distributor's
// back and reports unmanaged paths. It deletes and adopts nothing, checks no
// digest and never rewrites legacy, invalid or future state. The error is for
// invalid options; the rest is reported.
func (a *App) ReconcileState(ctx context.Context, cfg *config.Config, opts ReconcileOptions) (*report.ReconcileState, error) {
	t, err := resolveMaint(cfg, "reconcile-state", opts.Root)
	if err != nil {
		return nil, err
	}
	rep := &report.ReconcileState{Target: t.head, DryRun: opts.DryRun, AllOwners: opts.AllOwners,
		Missing: []report.Record{}, Unmanaged: []string{}, Removed: []report.Record{}, TempFiles: []string{}}
	fail := func(err error) (*report.ReconcileState, error) { a.maintFailed(&rep.Failure, t, err); return rep, nil }
	m, ctx, err := a.openMaintRoot(ctx, t, !opts.DryRun)
	if m != nil {
		defer m.close()
		rep.Root, rep.State, rep.Warnings, rep.RootRecovery = m.store.String(), string(m.state.Status), m.warnings, rootRecovery(m.tx)
	}
	if err != nil {
		return fail(err)
	}
	st := m.store
	// Temporary files: removed under the lock, listed in a dry run.
	var temps []string
	if m.tx != nil {
		temps, err = m.tx.SweepTemp(false)
	} else {
		temps, err = st.SweepTemp(ctx, storage.SweepOptions{DryRun: true})
	}
	if err != nil {
		return fail(fmt.Errorf("temporary files: %w", err))
	}
	rep.TempFiles = append(rep.TempFiles, temps...)
	keep := ownedBy(t.owner, opts.AllOwners)
	var drop []string
	err = mergeListing(ctx, st, m.cat, func(o *catalog.Output, l *storage.Info) error {
		switch {
		case o == nil:
			if !cleanpath.HasReservedSegment(l.Path) {
				rep.Unmanaged = append(rep.Unmanaged, l.Path)
			}
			return nil
		case !keep(o):
			return nil
		}
		rep.Checked++
		if l != nil {
			return nil
		}
		// Only a file Stat says does not exist is missing.
		_, err := st.Stat(ctx, o.Path)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, storage.ErrNotExist):
			return fmt.Errorf("check %s: %w", o.Path, err)
		}
		rep.Missing = append(rep.Missing, report.RecordOf(o))
		drop = append(drop, o.Path)
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if opts.DryRun || len(drop) == 0 {
		return rep, nil
	}
	ch := m.change()
	ch.Final = a.dropping(m.cat.Header, drop)
	if _, err := m.tx.Apply(ch); err != nil {
		return fail(err)
	}
	rep.Removed = append(rep.Removed, rep.Missing...)
	for _, m := range rep.Removed {
		a.Logger.Info("dropped record of missing file", "path", m.Path, "pipeline", m.PipelineID, "destination", m.DestinationID)
	}
	return rep, nil
}

// auditBatch records are checked at a time: memory follows it, not the catalog.
const auditBatch = 1024

// auditRecord has a listing entry l when only sizes are compared (nil: not listed).
type auditRecord struct {
	o *catalog.Output
	l *storage.Info
}

// auditStream audits what records yields into res (OK, Missing, Corrupt),
// auditBatch at a time (with quick only listed sizes, else the bytes), in
// its order whatever the jobs. checked, when set, is called from any
// goroutine after each output, with the bytes read (0 with quick).
func auditStream(ctx context.Context, st storage.Store, records func(fn func(o *catalog.Output, l *storage.Info) error) error,
	quick bool, jobs int, checked func(path string, read int64), res *report.Verify) error {
	batch := make([]auditRecord, 0, auditBatch)
	flush := func() error {
		err := auditRecords(ctx, st, batch, quick, jobs, checked, res)
		batch = batch[:0]
		return err
	}
	err := records(func(o *catalog.Output, l *storage.Info) error {
		batch = append(batch, auditRecord{o: o, l: l})
		if len(batch) < auditBatch {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	return err
}

// auditRecords checks a batch, jobs at once, adding verdicts to res in order.
func auditRecords(ctx context.Context, st storage.Store, sel []auditRecord, quick bool, jobs int, checked func(string, int64), res *report.Verify) error {
	type verdict struct {
		missing bool
		corrupt *report.VerifyCorrupt
		err     error
	}
	verdicts := make([]verdict, len(sel))
	check := func(ctx context.Context, k int) error {
		o, v := sel[k].o, &verdicts[k]
		actual, read := "", int64(0)
		if l := sel[k].l; quick {
			switch {
			case l == nil:
				v.missing = true
			case l.Size != o.Size:
				actual = fmt.Sprintf("%d bytes (content not read: --quick)", l.Size)
			}
		} else {
			sum, size, err := txn.HashObject(ctx, st, o.Path)
			switch {
			case errors.Is(err, storage.ErrNotExist):
				v.missing = true
			case err != nil:
				v.err = err
				return err
			case sum != o.SHA256 || size != o.Size:
				actual = fmt.Sprintf("%s (%d bytes)", sum, size)
			}
			read = size
		}
		if actual != "" {
			v.corrupt = &report.VerifyCorrupt{Record: report.RecordOf(o), Expected: fmt.Sprintf("%s (%d bytes)", o.SHA256, o.Size), Actual: actual}
		}
		if checked != nil {
			checked(o.Path, read)
		}
		return nil
	}

	if quick {
		jobs = 1 // nothing to wait for
	}
	// After the first failure the others' reads end early (parallel
	// cancels them): their errors are not the cause.
	failed := parallel(ctx, jobs, len(sel), check) != nil
	var cancelled error
	for k, v := range verdicts {
		switch {
		case v.err != nil && ctx.Err() == nil && errors.Is(v.err, context.Canceled):
			cancelled = cmp.Or(cancelled, v.err) // stopped by another output's failure
		case v.err != nil:
			return v.err
		case v.missing:
			res.Missing = append(res.Missing, report.RecordOf(sel[k].o))
		case v.corrupt != nil:
			res.Corrupt = append(res.Corrupt, *v.corrupt)
		default:
			res.OK++
		}
	}
	if failed || ctx.Err() != nil {
		// Only cancellations were kept above: the cause was the caller's.
		return cmp.Or(ctx.Err(), cancelled)
	}
	return nil
}
