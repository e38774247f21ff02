// Package txn is distributor's write protocol for one destination root,
// shared by every command that changes a root (run, prune --apply,
// reconcile-state) and by crash recovery (docs/design.md, "Fencing" and
// "Write protocol"):
//
//	lock -> recover a dead run's journal -> sweep temporary files ->
//	journal -> writes (phase by phase) -> deletes -> sync ->
//	catalog compare-and-swap -> drop journal -> unlock
//
// Every change is fenced: it happens only while this process provably holds
// the root's lock (lock.Lock.Fence), checked right before the change and
// again by the context the storage call gets. After a failure the
// transaction settles the root in bounded time: it removes only what it
// provably wrote, records what it cannot undo, and keeps its intent journal
// whenever it cannot tell, for the next holder of the lock to recover.
//
// The package knows catalogs and journals but no configuration, workflow or
// ownership rule: callers describe a Change and the engine applies it.
package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/probe"
)

// DefaultCleanupTimeout bounds how long a failed transaction spends
// settling the root before it leaves the rest to the next writer.
const DefaultCleanupTimeout = time.Minute

// Options configure Begin.
type Options struct {
	Store storage.Store
	// Command names the writer in the lock record and the journal ("run",
	// "prune", "reconcile-state").
	Command string
	Logger  *slog.Logger
	// Lock is the template of the lock to take: Wait, NoWait, Lease,
	// SkewAllowance and the clocks. Its Store is set by Begin.
	Lock lock.Locker
	// Jobs is how many writes or deletes run at once (default 1).
	Jobs int
	// CleanupTimeout bounds settling after a failure (default 1 minute).
	CleanupTimeout time.Duration
	// Now stamps journals and recovered catalogs (default time.Now).
	Now func() time.Time
	// SingleWriter lets a root whose server fails the exclusion probe be
	// written anyway (the operator guarantees that no two writers ever
	// run on it), with a warning every time.
	SingleWriter bool
	// Retries, when set, reports how many requests the store's retrying
	// wrapper sent again so far (the app's retry.Store.Retries): after
	// a change with writes, once it is above zero, the directories written
	// to are swept, since a retried upload may have left a temporary file
	// its cleanup could not reach.
	Retries func() int
	// Intent, when set, is the change the caller means to Apply, known
	// before Begin (a run plans before it locks): its intent journal, when
	// it encodes to at most IntentCap bytes, travels in the lock record
	// Begin creates instead of .distributor.journal, which saves the
	// journal's own create and delete (docs/design.md, "The 10-request
	// design"). Apply still takes the change it applies; one that differs
	// rewrites the record first. Ignored with SingleWriter: where exclusive
	// create may not be enforced, a lock create could replace a dead run's
	// record and its intent; the journal object keeps it.
	Intent *Change
}

// IntentCap bounds the intent a lock record carries (renewals rewrite the
// record, waiters read it every poll); a larger one goes to the journal.
const IntentCap = 64 << 10

// Txn is a held destination root: its lock, recovered and swept.
type Txn struct {
	opts Options
	st   storage.Store
	lk   *lock.Lock
	ctx  context.Context
	stop func()
	// intr bounds the work after the caller's context is done (see
	// InterruptedCleanup); intrStop ends its watch.
	intr     *interruption
	intrStop func() bool
	// Recovery is what Begin recovered from a dead run's journal (nil if
	// there was none).
	Recovery *Recovery
	// Swept lists the temporary files Begin removed, sorted; SweptBytes is
	// their size (what the store knows of it: see storage.SweepOptions).
	Swept      []string
	SweptBytes int64
	// catalogSum is the sha256 of the last catalog document writeCatalog
	// tried to write.
	catalogSum string
	// catalogSeen is the catalog's Version as Begin's listing of the
	// reserved names showed it ("" for none), or nil: see CatalogVersion.
	catalogSeen *storage.Version
	// runID and started name this transaction in its journal.
	runID   string
	started time.Time
	// intentLive says the lock record carries the intent of a change
	// Apply started and has not settled: End moves it to the journal.
	intentLive bool
}

// ReservedPrefix starts the name of every object distributor keeps at a
// root besides the outputs: the catalog, the lock and its claims, the
// journal, probe objects.
const ReservedPrefix = ".distributor."

// reservedPage bounds the listing of the reserved names in Begin: more
// reserved objects than this (leftover claims or probe objects) and Begin
// reads the lock back and looks for a journal one request each instead.
const reservedPage = 100

// CatalogVersion returns the catalog's Version as Begin saw it under the
// lock ("" when there was none) and true, when Begin saw it at no extra
// cost: on a store that lists a page in one request (S3), whose one
// listing of the reserved names serves the lock's proof, the journal's
// presence and this, and when no recovery changed the catalog after.
// Otherwise it returns false.
func (t *Txn) CatalogVersion() (storage.Version, bool) {
	if t.catalogSeen == nil {
		return "", false
	}
	return *t.catalogSeen, true
}

// Begin takes the root's lock (waiting as opts.Lock says), proves on the
// lock object that the root's server enforces conditional writes (see
// lock.Lock.ProveExclusion; a server that does not is refused, the lock
// removed again, unless opts.SingleWriter), recovers the root if a dead run
// left its journal, and removes temporary files that interrupted writes
// left in the root directory (everywhere below it after a recovery). On a
// store that lists a page in one request (S3), one listing of the reserved
// names serves the proof's read-back, the journal's lookup and
// CatalogVersion. The returned Txn's Context is cancelled when ctx is or when
// the lock's fence lapses. End releases it.
func Begin(ctx context.Context, opts Options) (*Txn, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CleanupTimeout <= 0 {
		opts.CleanupTimeout = DefaultCleanupTimeout
	}
	if opts.Jobs < 1 {
		opts.Jobs = 1
	}
	l := opts.Lock
	l.Store = opts.Store
	runID, started := RunID(), opts.Now().UTC().Truncate(time.Second)
	if opts.SingleWriter {
		opts.Intent = nil // see Intent
	}
	if opts.Intent != nil && len(opts.Intent.Writes)+len(opts.Intent.Deletes) > 0 {
		if data, err := encodeJournal(opts.Intent, runID, opts.Command, started); err == nil && len(data) <= IntentCap {
			l.Intent = data
		}
	}
	k, err := l.Acquire(ctx, opts.Command)
	if err != nil {
		return nil, err
	}
	// No trust without proof: the lock and the catalog's compare-and-swap
	// are only as good as the server's enforcement of conditional writes.
	var reserved map[string]storage.Info
	var readBack probe.ReadBack
	if opts.Store.Properties().ListPages {
		readBack = func(ctx context.Context, name string, own []byte, v storage.Version) (bool, error) {
			infos, complete, err := opts.Store.ListPage(ctx, ReservedPrefix, reservedPage)
			if err == nil && complete {
				seen := make(map[string]storage.Info, len(infos))
				for _, i := range infos {
					seen[i.Path] = i
				}
				if i, ok := seen[name]; ok && i.Version == v {
					reserved = seen
					return true, nil
				}
			}
			// A failed or incomplete listing, or a Version that does not
			// match (a write applied anyway, or a server whose listings
			// show ETags differently): read the record itself.
			return probe.GetReadBack(opts.Store)(ctx, name, own, v)
		}
	}
	if err := k.ProveExclusion(ctx, readBack); err != nil {
		var ue *probe.UnenforcedError
		if !errors.As(err, &ue) || !opts.SingleWriter {
			if rerr := k.Release(context.WithoutCancel(ctx)); rerr != nil {
				err = fmt.Errorf("%w (and releasing the lock: %w)", err, rerr)
			}
			return nil, err
		}
		opts.Logger.Warn("the server does not enforce conditional writes; writing anyway because the destination sets single_writer: "+
			"two writers at once on this root would lose records", "root", opts.Store.String(), "missing", ue.Capability)
	}
	t := &Txn{opts: opts, st: opts.Store, lk: k, intr: &interruption{parent: ctx}, runID: runID, started: started}
	t.intrStop = context.AfterFunc(ctx, func() { t.intr.mark() })
	t.ctx, t.stop = k.Bind(ctx)
	var rec *Recovery
	if _, journaled := reserved[journal.Name]; reserved == nil || journaled {
		if rec, err = Recover(t.ctx, t.st, k.Fence, opts.Now()); err != nil {
			t.End()
			return nil, fmt.Errorf("recover %s: %w", t.st, err)
		}
	}
	if reserved != nil && rec == nil {
		v := reserved[catalog.FileName].Version // "" for none
		t.catalogSeen = &v
	}
	t.Recovery = rec
	if err := t.sweepAtBegin(rec); err != nil {
		t.End()
		return nil, err
	}
	rec.log(opts.Logger, t.st.String())
	return t, nil
}

// sweepAtBegin removes the temporary files interrupted writes left, and
// counts them (with rec's, after a recovery). A process killed while
// creating the lock, a claim, the journal or the catalog leaves its
// temporary file in the root directory; one killed while writing outputs
// left a journal, so after a recovery the whole tree is swept. A store
// whose small writes leave no temporary object
// (Properties.AtomicSmallWrites: S3) has nothing to sweep there.
func (t *Txn) sweepAtBegin(rec *Recovery) error {
	scope := storage.SweepOptions{Dirs: []string{""}}
	if rec != nil {
		scope.Dirs = nil
	}
	// Every removal counts, also one by an attempt of a retried sweep
	// that failed later (its returned list is the last attempt's).
	scope.Found = func(i storage.Info) {
		t.Swept = append(t.Swept, i.Path)
		t.SweptBytes += i.Size
	}
	if rec == nil && t.st.Properties().AtomicSmallWrites {
		return nil
	}
	_, err := t.sweep(t.ctx, scope)
	slices.Sort(t.Swept)
	if rec != nil {
		rec.TempSwept, rec.TempBytes = len(t.Swept), t.SweptBytes
	}
	if err != nil {
		rec.log(t.opts.Logger, t.st.String())
		return fmt.Errorf("sweep temporary files of %s: %w", t.st, err)
	}
	return nil
}

// Context is the context of the work under the lock: cancelled when the
// caller's is, or when this process can no longer prove it holds the lock
// (its cause is then lock.ErrLost or lock.ErrLeaseLapsed).
func (t *Txn) Context() context.Context { return t.ctx }

// Fence returns nil while this process provably holds the root's lock.
func (t *Txn) Fence() error { return t.lk.Fence() }

// End releases the lock (if this process still provably holds it). After
// an interruption it gives up on the release InterruptedCleanup after it:
// the lock of a dead process is then the next writer's to take over.
// Calling it again does nothing.
func (t *Txn) End() {
	t.stop()
	if t.intentLive {
		t.lk.KeepIntent()
	}
	ctx, cancel := t.bounded(context.Background(), 0)
	defer cancel()
	if err := t.lk.Release(ctx); err != nil {
		t.opts.Logger.Warn("release lock", "root", t.st.String(), "err", err)
	}
	t.intrStop()
}

// SweepTemp finds (dryRun) or removes the temporary files below the whole
// root, under the lock's fence.
func (t *Txn) SweepTemp(dryRun bool) ([]string, error) {
	return t.sweep(t.ctx, storage.SweepOptions{DryRun: dryRun})
}

func (t *Txn) sweep(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	if !opts.DryRun {
		if err := t.lk.Fence(); err != nil {
			return nil, err
		}
	}
	return t.st.SweepTemp(ctx, opts)
}

// Write is one object a Change writes.
type Write struct {
	Path string
	// Existed says the path held an object when the change was planned:
	// the write replaces it. Otherwise it creates it.
	Existed bool
	// Previous is the digest and size of the bytes the write replaces, when
	// known.
	Previous *Digest
	// SHA256 and Size are the bytes the write leaves.
	SHA256 string
	Size   int64
	// Record is the catalog record the write stands for (journaled, so
	// that recovery can roll the write forward).
	Record catalog.Output
	// Open opens the bytes to write.
	Open func(ctx context.Context) (io.ReadCloser, error)
	// Phase orders the writes of a Change: all writes of a lower phase
	// complete before any write of a higher phase starts.
	Phase int
	// Metadata is stored with the object by stores that serve it
	// (storage.PutOptions.Metadata).
	Metadata storage.Metadata
}

// putOptions are the options of w's Put or Stage. A path that did not
// exist when the change was planned is only ever created, never replaced:
// should a successor have written it since, the write fails instead of
// destroying the successor's file.
func (w *Write) putOptions() storage.PutOptions {
	o := storage.PutOptions{Mode: storage.PutCreate, Metadata: w.Metadata}
	if w.Existed {
		o.Mode = storage.PutReplace
	}
	return o
}

// written reports the completed write w to Written, if set.
func (ch *Change) written(w *Write) {
	if ch.Written != nil {
		ch.Written(w.Path, w.Size)
	}
}

// Digest names some bytes.
type Digest struct {
	SHA256 string
	Size   int64
}

// Change is what one transaction applies.
type Change struct {
	// Base is the catalog's version the change was planned from ("" when
	// there was no catalog): the catalog write is a compare-and-swap
	// against it.
	Base storage.Version
	// BaseCopy, when set, holds the bytes of the catalog at Base as the
	// planner read them: Final and Partial are applied to it instead of a
	// second read of the root's catalog (the write is still a
	// compare-and-swap against Base).
	BaseCopy *Spool
	// BaseCanonical says the planner found every record of the catalog at
	// Base laid out as distributor writes it (catalog.ScanCanonical), so
	// an edit is spliced into its bytes without decoding them again.
	BaseCanonical bool
	// Writes are applied first, phase by phase (see Write.Phase), in this
	// order within a phase (up to Options.Jobs at once), then Deletes.
	Writes  []Write
	Deletes []string
	// Final turns the catalog at Base into the one that records every
	// write and delete once all took effect; nil leaves the catalog alone.
	// It is applied while the catalog streams, so a small change to a
	// large catalog costs memory for the change only.
	Final *catalog.Edit
	// Partial returns the edit that records exactly the writes and
	// deletes in done (paths), after a failure; nil leaves the catalog
	// alone. It may be nil.
	Partial func(done []string) *catalog.Edit
	// Written, when set, is called after each completed write (from the
	// writing goroutines); a staged write counts as completed once staged.
	Written func(path string, size int64)
	// Staged asks for staged writes where the store supports them (see
	// storage.Store.Stage): every write is first copied to a temporary
	// name, and only when all of them were staged without error are they
	// made visible (committed) phase by phase. A write whose content fails
	// (a bundle file whose bytes do not match its manifest) then leaves
	// nothing visible. A store that cannot stage (S3) writes as without it.
	Staged bool
}

// Result says what a transaction did.
type Result struct {
	// Committed is true when Final was written (or there was none and
	// every write and delete took effect).
	Committed bool
	// Done lists, sorted, the paths whose write or delete took effect and
	// is recorded.
	Done []string
	// RolledBack lists the paths this transaction created and removed
	// again after a failure.
	RolledBack []string
	// Left lists what the cleanup after a failure could not prove to be
	// this transaction's, or could not remove.
	Left []Leftover
	// JournalKept says the root keeps this transaction's intent journal
	// for the next writer to recover.
	JournalKept bool
}

// Leftover is a path a failed transaction's cleanup left in place.
type Leftover struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Apply applies ch under the lock. It returns a nil error when every write
// and delete took effect and the catalog was written. Otherwise it settles
// the root (see the package documentation) and returns an error that says
// what happened, together with a Result.
func (t *Txn) Apply(ch *Change) (*Result, error) {
	ctx := t.ctx
	res := &Result{}
	if len(ch.Writes) == 0 && len(ch.Deletes) == 0 {
		if len(t.lk.Info().Intent) > 0 && ch.Final != nil {
			// The record's intent is of a change this one is not.
			if err := t.lk.SetIntent(ctx, nil); err != nil {
				return res, fmt.Errorf("lock record: %w; nothing was changed", err)
			}
		}
		if ch.Final != nil {
			if err := t.writeCatalog(ctx, ch.Final, ch); err != nil {
				return res, err
			}
		}
		res.Committed = true
		return res, nil
	}
	if err := t.writeJournal(ctx, ch); err != nil {
		if ferr := t.lk.Fence(); ferr != nil {
			// The journal may have landed before the lock was lost: it is
			// the next holder's to recover.
			return res, &FencedError{Cause: err, Fence: ferr,
				Then: "changed nothing after that; if its journal write landed, the lock's next holder recovers the root from it"}
		}
		if !errors.Is(err, storage.ErrPrecondition) {
			// A journal write whose answer was lost may have landed: it is
			// this transaction's (it holds the lock), so remove it.
			t.dropJournal()
		}
		return res, fmt.Errorf("%w; no output was changed", err)
	}
	a := &attempt{t: t, ch: ch, written: map[string]bool{}, deleted: map[string]bool{}}
	var err error
	if ch.Staged && len(ch.Writes) > 0 && t.st.Properties().Stage {
		if err = a.stageAll(ctx); err != nil {
			return a.unstaged(err)
		}
		err = a.commitAll(ctx)
	} else {
		err = a.putAll(ctx)
	}
	if err == nil {
		err = t.each(ctx, len(ch.Deletes), func(ctx context.Context, i int) error {
			p := ch.Deletes[i]
			if err := t.lk.Fence(); err != nil {
				return err
			}
			if err := t.st.Delete(ctx, p); err != nil {
				return fmt.Errorf("delete %s: %w", p, err)
			}
			return nil
		}, func(i int) { a.deleted[ch.Deletes[i]] = true })
	}
	if err == nil {
		err = t.sync(ctx)
	}
	if err == nil && ch.Final != nil {
		err = t.writeCatalog(ctx, ch.Final, ch)
		if err != nil && !errors.Is(err, storage.ErrPrecondition) {
			a.catalogUnsure = true
		}
	}
	if err != nil {
		return a.settle(err)
	}
	res.Committed = true
	res.Done = a.done()
	// An upload that failed and was retried (a dropped connection) may
	// have left its temporary file where its cleanup could not reach it:
	// sweep the directories written to. If that fails, the journal stays,
	// so the next writer sweeps the whole tree.
	if t.opts.Retries != nil && t.opts.Retries() > 0 && len(ch.Writes) > 0 {
		if _, err := t.sweep(t.lk.Context(), storage.SweepOptions{Dirs: dirsOf(ch.Writes)}); err != nil {
			t.opts.Logger.Warn("sweep temporary files after retried writes; the next writer sweeps the root", "root", t.st.String(), "err", err)
			return res, nil
		}
	}
	t.dropJournal()
	return res, nil
}

// writeJournal records the change before its first step, so that recovery
// can settle the root if this process dies: in the lock record when Begin
// was given an intent (Options.Intent) and this one fits (IntentCap), the
// record rewritten first unless it carries exactly this intent already;
// otherwise in .distributor.journal (a record's other intent removed
// first).
func (t *Txn) writeJournal(ctx context.Context, ch *Change) error {
	if err := t.lk.Fence(); err != nil {
		return err
	}
	data, err := encodeJournal(ch, t.runID, t.opts.Command, t.started)
	if err != nil {
		return err
	}
	inRecord := t.lk.Info().Intent
	if t.opts.Intent != nil && len(data) <= IntentCap {
		if !bytes.Equal(data, inRecord) {
			if err := t.lk.SetIntent(ctx, data); err != nil {
				return fmt.Errorf("write the intent to %s: %w", lock.Name, err)
			}
		}
		t.intentLive = true
		return nil
	}
	if len(inRecord) > 0 {
		if err := t.lk.SetIntent(ctx, nil); err != nil {
			return fmt.Errorf("remove the intent from %s: %w", lock.Name, err)
		}
	}
	if _, err := storage.PutIf(ctx, t.st, journal.Name, data, ""); err != nil {
		return fmt.Errorf("write %s: %w", journal.Name, err)
	}
	return nil
}

// encodeJournal encodes the intent journal of ch.
func encodeJournal(ch *Change, runID, command string, started time.Time) ([]byte, error) {
	j := &journal.Journal{RunID: runID, Command: command, Started: started, BaseVersion: string(ch.Base)}
	for i := range ch.Writes {
		w := &ch.Writes[i]
		r := w.Record
		j.Ops = append(j.Ops, journal.Op{Op: journal.OpWrite, Path: w.Path, Existed: w.Existed,
			SHA256: w.SHA256, Size: w.Size, Record: &r})
	}
	for _, p := range ch.Deletes {
		j.Ops = append(j.Ops, journal.Op{Op: journal.OpDelete, Path: p})
	}
	return journal.Encode(j)
}

// dropJournal removes the journal once the root is settled. If that fails
// (or the fence lapsed) the next writer finds the catalog committed and only
// removes the journal. An intent in the lock record goes with the record
// (End): nothing to send.
func (t *Txn) dropJournal() {
	if t.intentLive {
		t.intentLive = false
		return
	}
	if err := t.lk.Fence(); err != nil {
		return
	}
	if err := t.st.Delete(t.lk.Context(), journal.Name); err != nil {
		t.opts.Logger.Warn("remove journal", "root", t.st.String(), "err", err)
	}
}

// writeCatalog applies e to the catalog at version base (streaming it,
// see encodeEdit) and writes the result with compare-and-swap against
// base, under the fence. It remembers the digest of the bytes it tried to
// write, so that a cleanup can recognise its own write whose answer was
// lost.
func (t *Txn) writeCatalog(ctx context.Context, e *catalog.Edit, ch *Change) error {
	err := t.putEdit(ctx, e, ch)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrPrecondition):
		return fmt.Errorf("write %s: it changed since it was read (another writer?): %w", catalog.FileName, err)
	}
	var fenced *fencedError
	if errors.As(err, &fenced) {
		return fenced.err
	}
	if cause := context.Cause(ctx); errors.Is(err, context.Canceled) && cause != nil && !errors.Is(cause, context.Canceled) {
		// The lock cancelled the write (its lease lapsed, or it was
		// lost): say so, not just "context canceled".
		return fmt.Errorf("write %s: %w", catalog.FileName, cause)
	}
	return fmt.Errorf("write %s: %w", catalog.FileName, err)
}
