package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/render"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/txn"
)

// destinationRun is one destination of a run, shared by its steps.
type destinationRun struct {
	a    *App
	p    *config.Pipeline
	d    *config.Destination
	b    *bundle.Bundle
	vc   *contentCheck
	opts RunOptions
	rd   report.Destination

	st      storage.Store
	root    *RootState // what the last plan was made from
	res     *render.Result
	req     planRequest
	reports *reportCollector
	outs    []render.Output   // of the last plan, with the archive index and feed
	staging bool              // written bytes are verified as copied (contentCheck)
	staged  map[string]string // output path -> the bundle file a staged write checks as it copies
	jobs    int
	z       compressed
	// stopped: a failed bytes check left the root as it was (reportBundle);
	// rolledBack counts files created and removed again (no staging).
	stopped    bool
	rolledBack int
}

func (dr *destinationRun) failed(err error) {
	dr.rd.Status, dr.rd.Err = report.StatusFailed, err
	dr.a.logFailure("destination failed", catalog.Owner{PipelineID: dr.p.ID, DestinationID: dr.d.ID}, err)
}

// prepare expands the paths, renders the outputs and opens the store, which
// it returns whenever opened, also with an error.
func (dr *destinationRun) prepare(ctx context.Context) (storage.Store, error) {
	a, p, d, b, opts := dr.a, dr.p, dr.d, dr.b, dr.opts
	vars := config.Vars{PipelineID: p.ID, DestinationID: d.ID, SourceID: b.Manifest.ID, SourceCreated: b.Manifest.Created}
	root, err := config.Expand(d.Path, vars)
	if err != nil {
		return nil, fmt.Errorf("destination path: %w", err)
	}
	dr.rd.Root = root
	prefix, err := config.Expand(d.Paths.Prefix, vars)
	if err != nil {
		return nil, fmt.Errorf("paths.prefix: %w", err)
	}
	res, err := render.Plan(ctx, b, d, prefix)
	if err != nil {
		return nil, err
	}
	dr.res, dr.outs = res, res.Outputs
	dr.rd.PrimaryURL = res.PrimaryURL
	dr.rd.Excluded, dr.rd.Warnings = res.Excluded, append(backendWarnings(d), res.Warnings...)
	for _, w := range dr.rd.Warnings {
		a.Logger.Warn(w, "pipeline", p.ID, "destination", d.ID)
	}
	if opts.Force {
		b, _ := registry.Lookup(d.Backend) // a key prefix in a bucket, or a directory
		if err := plan.CheckForceRoot(b.Path == storage.PathKey, root); err != nil {
			return nil, err
		}
	}
	st, err := a.Open(ctx, d, root)
	if err != nil {
		return nil, err
	}
	dr.st = st
	dr.rd.Root = st.String()
	if d.Index != nil { // an index or feed path an output takes too is refused
		for _, o := range res.Outputs {
			for _, x := range []struct{ field, path string }{{"index.path", d.Index.Path}, {"index.feed", d.Index.Feed}} {
				if x.path != "" && o.Path == x.path {
					return st, fmt.Errorf("destination %q: %s %q is also the output of bundle file %q: rename one of them (paths.rename, paths.prefix or %s)",
						d.ID, x.field, x.path, o.SourcePath, x.field)
				}
			}
		}
	}
	// A staged write checks an output's bundle file as it copies it
	// (OpenVerified, see openOutput): staged maps their output paths to them.
	dr.staging = st.Properties().Stage
	streamed := map[string]bool{}
	for _, o := range res.Outputs {
		if o.SourcePath != "" && o.Content == nil && o.Kind != render.KindGenerated {
			streamed[o.SourcePath] = true
		}
	}
	dr.staged = map[string]string{}
	for _, o := range res.Outputs {
		if streamed[o.SourcePath] {
			dr.staged[o.Path] = o.SourcePath
		}
	}
	dr.jobs = jobsFor(d.Backend, opts.Jobs)
	planned, err := compressPlan(d.Compress, !st.Properties().Directories, res.Outputs)
	if err != nil {
		return st, err
	}
	req := planRequest{outputs: planned, owner: catalog.Owner{PipelineID: p.ID, DestinationID: d.ID},
		workflow: d.Workflow, force: opts.Force, props: st.Properties(), jobs: dr.jobs}
	dr.reports = &reportCollector{dest: d.ID}
	if d.Index != nil { // the index and feed paths are planned too, from d's records
		for _, p := range []string{d.Index.Path, d.Index.Feed} {
			if p != "" {
				req.outputs = append(req.outputs, plan.Output{Path: p, Kind: catalog.KindGenerated})
			}
		}
		req.reports = dr.reports.visit
	}
	dr.req = req
	return st, nil
}

func (dr *destinationRun) readRoot(ctx context.Context) (r *RootState, err error) {
	dr.root.Close()
	dr.reports.recs = nil
	r, err = readPlanRoot(ctx, dr.st, dr.req)
	dr.root = r
	return r, err
}

func (dr *destinationRun) makePlan(ctx context.Context, r *RootState) (plan.Input, *plan.Plan, error) {
	d, b := dr.d, dr.b
	in := plan.Input{Owner: dr.req.owner, Source: catalog.Source{ID: b.Manifest.ID, Digest: b.Manifest.Digest, Created: b.Manifest.Created},
		State: r.State, Known: r.Known, Listing: r.Listing, Partial: r.Partial,
		Workflow: d.Workflow, Force: dr.opts.Force, Rewrite: dr.opts.Rewrite,
		Now: dr.a.Now(), DistributorVersion: dr.a.Version}
	outs, err := withIndex(d, in.Owner, in.Source, dr.opts.Force, r.State.Status, dr.reports.recs, dr.res.Outputs)
	if err == nil {
		outs, err = compressPlan(d.Compress, !dr.st.Properties().Directories, outs)
	}
	if err == nil {
		err = dr.z.digest(ctx, in, outs, func(o *render.Output) (io.ReadCloser, error) { return openOutput(ctx, b, o, &dr.z) })
	}
	if err != nil {
		return plan.Input{}, nil, err
	}
	dr.outs, in.Outputs = outs, outs
	pl, err := plan.Make(in)
	if err == nil {
		refuseForeignIndex(d, r.Known, pl)
		dr.rd.State, dr.rd.Plan = string(r.State.Status), pl
	}
	return in, pl, err
}

// check refuses a plan before any change: mismatched bytes, the delete guard, fail_*.
func (dr *destinationRun) check(ctx context.Context, in plan.Input, pl *plan.Plan) error {
	if len(pl.Writes()) > 0 && !pl.Action.Failed() {
		written := map[string]bool{}
		if dr.staging && !dr.opts.DryRun { // a dry run stages nothing, so it hashes everything
			for _, it := range pl.Writes() {
				if src := dr.staged[it.Path]; src != "" {
					written[src] = true
				}
			}
		}
		if err := dr.vc.check(ctx, written); err != nil {
			dr.stopped = dr.vc.err != nil // not when cancelled
			return fmt.Errorf("%w; nothing was written", sourceErr(dr.b.Dir, err))
		}
	}
	if err := deleteGuard(dr.d, dr.opts, pl, len(in.Outputs)); err != nil {
		return err
	}
	if pl.Action.Failed() {
		return errors.New(pl.Reason)
	}
	return nil
}

// pending reports whether a dead (or running) run's journal is at r: only a
// plan taking no lock needs to look, only after a partial read.
func (dr *destinationRun) pending(ctx context.Context, r *RootState) (bool, error) {
	if !r.Partial || r.Pending {
		return r.Pending, nil
	}
	var err error
	r.Pending, err = journalPresent(ctx, dr.st)
	return r.Pending, err
}

// partialCatalog reports whether r's catalog, read invalid, may be one a
// writer is creating: on a remote directory store an exclusive create can
// show its name before its bytes (SFTP's O_EXCL in place, FTP's guard
// directory), so the locked path reads it again before refusing.
func (dr *destinationRun) partialCatalog(r *RootState) bool {
	p := dr.st.Properties()
	return r.State.Status == catalog.StatusInvalid && p.Remote && p.Directories
}

// refusal is a plan refused before any change: nothing was applied.
type refusal struct{ error }

// publish plans from an unlocked read. A dry run stops there, as does one with
// nothing to write (skip_same, fail_*) and no dead run's journal: no lock.
// Anything else locks (recovering first), reads and plans again, and applies.
func (dr *destinationRun) publish(ctx context.Context) error {
	r, err := dr.readRoot(ctx)
	if err != nil {
		return err
	}
	in, pl, err := dr.makePlan(ctx, r)
	if err != nil {
		return err
	}
	if dr.opts.DryRun {
		return dr.dryRun(ctx, in, pl)
	}
	var cerr error
	if pl.Action != plan.SkipSame {
		cerr = dr.check(ctx, in, pl)
	}
	if pl.Action == plan.SkipSame || cerr != nil {
		pend, err := dr.pending(ctx, r)
		switch {
		case err != nil:
			return err
		case pend: // recover first, under the lock
		case cerr == nil: // skip_same
			dr.rd.Status, dr.rd.Counts = report.StatusOK, pl.Counts()
			return nil
		case !dr.partialCatalog(r):
			return refusal{cerr} // refused before taking the lock: nothing written
		}
	}
	return dr.lockedApply(ctx, in, pl, cerr == nil)
}

// dryRun finishes a dry run; over a pending journal it plans again from the
// state recovery would leave.
func (dr *destinationRun) dryRun(ctx context.Context, in plan.Input, pl *plan.Plan) error {
	pend, err := dr.pending(ctx, dr.root)
	if err != nil {
		return err
	}
	if pend {
		dr.rd.RecoveryPending = true
		view, rec, err := previewRecovery(ctx, dr.st, dr.req, dr.a.Now())
		if err != nil {
			return err
		}
		dr.rd.Recovered = recoverySummary(rec)
		dr.a.Logger.Warn("a dead run's intent journal is pending at this root: a real run recovers it first; this dry run plans from the recovered state",
			rec.LogAttrs(dr.rd.Root)...)
		dr.root.Close()
		dr.root = view
		if in, pl, err = dr.makePlan(ctx, view); err != nil {
			return err
		}
	}
	if err := dr.check(ctx, in, pl); err != nil {
		return refusal{err}
	}
	dr.rd.Status = report.StatusPlanned
	return nil
}

// lockedApply locks, plans again unless nothing changed since pl, and
// applies. checked says pl passed dr.check.
func (dr *destinationRun) lockedApply(ctx context.Context, in plan.Input, pl *plan.Plan, checked bool) (err error) {
	a, st := dr.a, dr.st
	defer func() { // after the lock is released: a failed first publish leaves no root it created
		if err == nil || !st.Properties().CreatesRoot {
			return
		}
		if _, err := st.RemoveCreatedRoot(context.WithoutCancel(ctx)); err != nil {
			a.Logger.Warn("remove the empty root directory this run created", "root", st.String(), "err", err)
		}
	}()
	locking := a.Now()
	// The intent travels in the lock record (txn.Options.Intent), unless the
	// plan is refused (locking only to recover): a refused plan's writes over
	// unmanaged files, or its invalid base, must never be recovered.
	ch := dr.change(dr.root, in, pl)
	var intent *txn.Change
	if checked && !pl.Action.Failed() {
		intent = ch
	}
	tx, err := a.begin(ctx, st, dr.d, "run", dr.jobs, intent)
	dr.rd.LockWait = a.Now().Sub(locking)
	if err != nil {
		return err
	}
	defer tx.End()
	ctx = tx.Context()
	dr.rd.RootRecovery = rootRecovery(tx)
	// No journal and the catalog at the first plan's version: no writer
	// committed since, the plan stands (a listing and parse are most of an
	// additive run's cost).
	r := dr.root
	unchanged := func() bool {
		if v, ok := tx.CatalogVersion(); ok {
			return v == r.Version // what the lock's listing showed (S3)
		}
		return catalogUnchanged(ctx, st, r)
	}
	if r.Pending || tx.Recovery != nil || !unchanged() {
		if r, err = dr.readRoot(ctx); err != nil {
			return err
		}
		if in, pl, err = dr.makePlan(ctx, r); err != nil {
			return err
		}
		ch = dr.change(r, in, pl)
	}
	if err := dr.check(ctx, in, pl); err != nil {
		return refusal{err}
	}
	return dr.apply(tx, ch, pl)
}

// change turns a plan into its change: writes (records, for recovery; bytes
// from memory or the bundle, see openOutput), deletes, the final catalog and
// a partial one (plan.Settle).
func (dr *destinationRun) change(r *RootState, in plan.Input, pl *plan.Plan) *txn.Change {
	now := in.Now.UTC().Truncate(time.Second)
	ch := &txn.Change{Base: r.Version, Final: pl.Edit, BaseCopy: r.CatalogCopy, BaseCanonical: r.CatalogCanonical, Staged: dr.staging,
		Writes: make([]txn.Write, 0, len(pl.Items))}
	shape := webWrites(dr.d, dr.res.PrimaryPath, dr.outs)
	outs := make(map[string]*render.Output, len(dr.outs))
	for i := range dr.outs {
		outs[dr.outs[i].Path] = &dr.outs[i]
	}
	k := 0 // pl.Edit.Put holds the records of the items not deleted, in order
	for i := range pl.Items {
		it := &pl.Items[i]
		switch it.Op {
		case plan.OpCreate, plan.OpOverwrite:
			o, rec := outs[it.Path], (*catalog.Output)(nil)
			if pl.Edit != nil {
				rec = &pl.Edit.Put[k]
			} else { // a refused plan has no edit
				rec = new(plan.Record(in, *it, now))
			}
			w := txn.Write{Path: it.Path, Existed: it.Op == plan.OpOverwrite, SHA256: it.Output.SHA256, Size: it.Output.Size,
				Record: rec,
				Open: func(ctx context.Context) (io.ReadCloser, error) {
					if o == nil {
						return nil, fmt.Errorf("no content planned for %s", it.Path)
					}
					return openOutput(ctx, dr.b, o, &dr.z)
				}}
			if it.Previous != nil {
				w.Previous = &txn.Digest{SHA256: it.Previous.SHA256, Size: it.Previous.Size}
			}
			shape(&w)
			ch.Writes = append(ch.Writes, w)
		case plan.OpDelete:
			ch.Deletes = append(ch.Deletes, it.Path)
			k--
		}
		k++
	}
	ch.Partial = func(done []string) *catalog.Edit {
		di := make([]plan.Item, 0, len(done))
		for _, path := range done {
			if i, ok := slices.BinarySearchFunc(pl.Items, path, func(it plan.Item, p string) int { return strings.Compare(it.Path, p) }); ok {
				di = append(di, pl.Items[i])
			}
		}
		return plan.Settle(in, pl, di)
	}
	return ch
}

func (dr *destinationRun) apply(tx *txn.Txn, ch *txn.Change, pl *plan.Plan) error {
	a, p, d := dr.a, dr.p, dr.d
	if a.OnEvent != nil {
		name := p.ID + " -> " + d.ID
		var total int64
		for _, w := range ch.Writes {
			total += w.Size
		}
		a.OnEvent(Event{Kind: EventStart, Task: name, Files: len(ch.Writes), Bytes: total})
		defer a.OnEvent(Event{Kind: EventFinish, Task: name})
		ch.Written = func(path string, size int64) { a.OnEvent(Event{Kind: EventDone, Task: name, Path: path, Bytes: size}) }
	}
	applied, err := tx.Apply(ch)
	if applied != nil {
		dr.rd.Done = applied.Done
	}
	if err != nil {
		dr.vc.failed(err)
		var me *bundle.MismatchError
		if errors.As(err, &me) && applied != nil && len(applied.Done) == 0 && len(applied.Left) == 0 &&
			!applied.JournalKept && tx.Fence() == nil {
			dr.stopped, dr.rolledBack = true, len(applied.RolledBack)
		}
		if applied != nil {
			dr.rd.Counts = report.AppliedCounts(pl, applied.Done)
		}
		return err
	}
	for _, w := range ch.Writes { // each staged source file streamed through OpenVerified
		if p := dr.staged[w.Path]; dr.staging && p != "" {
			dr.vc.matched(p)
		}
	}
	dr.rd.Status, dr.rd.Counts = report.StatusOK, pl.Counts()
	return nil
}
