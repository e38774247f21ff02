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
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
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
	// Lock is the template of the lock to take (waiting, lease, clocks);
	// Begin sets its Store.
	Lock           lock.Locker
	Jobs           int              // writes or deletes at once (default 1)
	CleanupTimeout time.Duration    // bounds settling after a failure (default 1 minute)
	Now            func() time.Time // stamps journals and recovered catalogs (default time.Now)
	// SingleWriter lets a root whose server fails the exclusion probe be
	// written anyway (the operator guarantees that no two writers ever
	// run on it), with a warning every time.
	SingleWriter bool
	// Retries, when set, counts the requests sent again (retry.Store.Retries):
	// once above zero, a change's written directories are swept, since a
	// retried upload may have left a temporary file its cleanup could not reach.
	Retries func() int
	// Intent, when set, is the change the caller means to Apply, known
	// before Begin: its intent journal, up to IntentCap bytes, travels in
	// the lock record instead of .distributor.journal, saving the journal's
	// create and delete (docs/design.md, "The 10-request design"). A
	// different change at Apply rewrites the record first. Ignored with
	// SingleWriter: where exclusive create may not be enforced, a lock
	// create could replace a dead run's record and its intent.
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
	// parent is the caller's context; interrupted returns, from the first
	// call (once parent is done), when the work after it must end (see
	// InterruptedCleanup); intrStop ends its watch.
	parent      context.Context
	interrupted func() time.Time
	intrStop    func() bool
	Recovery    *Recovery // what Begin recovered from a dead run's journal (nil: none)
	// Swept lists the temporary files Begin removed, sorted; SweptBytes is
	// their size (as far as the store knows: see storage.SweepOptions).
	Swept        []string
	SweptBytes   int64
	catalogSum   string          // sha256 of the catalog writeCatalog last tried to write
	catalogSeen  storage.Version // see CatalogVersion, when seen
	catalogKnown bool
	// runID and started name this transaction in its journal.
	runID   string
	started time.Time
	// intentLive: the lock record carries the intent of a change Apply
	// started and has not settled, which End moves to the journal.
	intentLive bool
}

// ReservedPrefix starts the name of every object distributor keeps at a root
// besides the outputs (catalog, lock and claims, journal, probe objects).
const ReservedPrefix = ".distributor."

// ReservedPage bounds a listing of the reserved names (Begin's, a plan's
// journal lookup): with more (leftover claims or probe objects) the lock
// is read back and the journal looked up one request each instead.
const ReservedPage = 100

// CatalogVersion returns the catalog's Version as Begin saw it under the
// lock ("" for none) and true, when Begin's one listing of the reserved
// names (a store that lists a page in one request: S3) showed it and no
// recovery changed the catalog after; otherwise false.
func (t *Txn) CatalogVersion() (storage.Version, bool) { return t.catalogSeen, t.catalogKnown }

// Begin takes the root's lock (as opts.Lock says), proves the server
// enforces conditional writes (lock.Lock.ProveExclusion; refused unless
// opts.SingleWriter), recovers a dead run's journal, and sweeps the
// temporary files interrupted writes left in the root directory (the whole
// tree after a recovery). On a store that lists a page in one request (S3),
// one listing of the reserved names serves the proof's read-back, the
// journal's lookup and CatalogVersion. The Txn's Context is cancelled when
// ctx is or the lock's fence lapses. End releases it.
func Begin(ctx context.Context, opts Options) (*Txn, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.CleanupTimeout = cmp.Or(max(opts.CleanupTimeout, 0), DefaultCleanupTimeout)
	opts.Jobs = max(opts.Jobs, 1)
	l := opts.Lock
	l.Store = opts.Store
	runID, started := RunID(), opts.Now().UTC().Truncate(time.Second)
	if opts.SingleWriter {
		opts.Intent = nil // see Intent
	}
	if opts.Intent != nil && len(opts.Intent.Writes)+len(opts.Intent.Deletes) > 0 {
		l.Intent, _, _ = intentOf(opts.Intent, runID, opts.Command, started)
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
			infos, complete, err := opts.Store.ListPage(ctx, ReservedPrefix, ReservedPage)
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
	t := &Txn{opts: opts, st: opts.Store, lk: k, parent: ctx, runID: runID, started: started,
		interrupted: sync.OnceValue(func() time.Time { return time.Now().Add(InterruptedCleanup) })}
	t.intrStop = context.AfterFunc(ctx, func() { t.interrupted() })
	t.ctx, t.stop = k.Bind(ctx)
	if _, journaled := reserved[journal.Name]; reserved == nil || journaled {
		if t.Recovery, err = Recover(t.ctx, t.st, k.Fence, opts.Now()); err != nil {
			t.End()
			return nil, fmt.Errorf("recover %s: %w", t.st, err)
		}
	}
	if reserved != nil && t.Recovery == nil {
		t.catalogSeen, t.catalogKnown = reserved[catalog.FileName].Version, true // "" for none
	}
	err = t.sweepAtBegin(t.Recovery)
	if rec := t.Recovery; rec != nil {
		opts.Logger.Warn("recovered a root left by a dead run", rec.LogAttrs(t.st.String())...)
		rec.LogPaths(opts.Logger, t.st.String())
	}
	if err != nil {
		t.End()
		return nil, err
	}
	return t, nil
}

// sweepAtBegin removes and counts (also in rec) the temporary files
// interrupted writes left. A process killed while creating the lock, a
// claim, the journal or the catalog leaves its temporary file in the root
// directory; one killed while writing outputs left a journal, so after a
// recovery the whole tree is swept. A store whose small writes leave no
// temporary object (Properties.AtomicSmallWrites: S3) needs no sweep then.
func (t *Txn) sweepAtBegin(rec *Recovery) error {
	if rec == nil && t.st.Properties().AtomicSmallWrites {
		return nil
	}
	// Every removal counts, also one by a retried sweep's failed attempt
	// (the returned list is the last attempt's).
	scope := storage.SweepOptions{Dirs: []string{""}, Found: func(i storage.Info) {
		t.Swept = append(t.Swept, i.Path)
		t.SweptBytes += i.Size
	}}
	if rec != nil {
		scope.Dirs = nil
	}
	_, err := t.sweep(t.ctx, scope)
	slices.Sort(t.Swept)
	if rec != nil {
		rec.TempSwept, rec.TempBytes = len(t.Swept), t.SweptBytes
	}
	if err != nil {
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

// End releases the lock if this process still provably holds it, giving
// up InterruptedCleanup after an interruption (the next writer then takes
// the lock of a dead process over). Calling it again does nothing.
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
	if err := t.lk.Fence(); err != nil && !opts.DryRun {
		return nil, err
	}
	return t.st.SweepTemp(ctx, opts)
}

// Write is one object a Change writes.
type Write struct {
	Path string
	// Existed says the path held an object when the change was planned:
	// the write replaces it, otherwise it creates it.
	Existed bool
	// Previous is the digest and size of the bytes replaced, when known.
	Previous *Digest
	// SHA256 and Size are the bytes the write leaves.
	SHA256 string
	Size   int64
	// Record is the catalog record the write stands for (journaled, so
	// that recovery can roll the write forward).
	Record *catalog.Output
	Open   func(ctx context.Context) (io.ReadCloser, error) // the bytes to write
	// Phase orders the writes of a Change: all writes of a lower phase
	// complete before any write of a higher phase starts.
	Phase    int
	Metadata storage.Metadata // see storage.PutOptions.Metadata
}

// putOptions are the options of w's Put or Stage. A path that did not
// exist when planned is only created, never replaced: should a successor
// have written it since, the write fails rather than destroy its file.
// The digest lets a store that signs it (S3) refuse other bytes.
func (w *Write) putOptions() storage.PutOptions {
	o := storage.PutOptions{Mode: storage.PutCreate, Metadata: w.Metadata, SHA256: w.SHA256}
	if w.Existed {
		o.Mode = storage.PutReplace
	}
	return o
}

// Digest names some bytes.
type Digest struct {
	SHA256 string
	Size   int64
}

// Change is what one transaction applies.
type Change struct {
	// Base is the catalog's version the change was planned from ("" for
	// none): the catalog write is a compare-and-swap against it.
	Base storage.Version
	// BaseCopy, when set, holds the catalog at Base as the planner read
	// it: Final and Partial are applied to it rather than to a second read.
	BaseCopy *Spool
	// BaseCanonical says every record of the catalog at Base is in
	// distributor's layout (catalog.ScanCanonical): an edit is spliced
	// into its bytes without decoding them again.
	BaseCanonical bool
	// Writes are applied first, phase by phase (see Write.Phase), in this
	// order within a phase (up to Options.Jobs at once), then Deletes.
	Writes  []Write
	Deletes []string
	// Final turns the catalog at Base into the one that records every
	// write and delete; nil leaves the catalog alone. It is applied while
	// the catalog streams, so its memory is the change's only.
	Final *catalog.Edit
	// Partial, when set, returns the edit that records exactly the writes
	// and deletes in done after a failure (nil: the catalog stays).
	Partial func(done []string) *catalog.Edit
	// Written, when set, is called after each completed write (from the
	// writing goroutines); a staged write counts as completed once staged.
	Written func(path string, size int64)
	// Staged asks for staged writes where the store can (storage.Store.Stage):
	// every write is first copied to a temporary name, and only once all
	// were staged are they committed phase by phase, so a write whose
	// content fails (bytes that do not match the manifest) leaves nothing
	// visible. A store that cannot stage (S3) writes as without it.
	Staged bool
}

// Result says what a transaction did.
type Result struct {
	// Committed: Final was written (or there was none and every write and
	// delete took effect).
	Committed bool
	// Done lists, sorted, the recorded paths whose write or delete took effect.
	Done []string
	// RolledBack lists the paths created and removed again after a failure.
	RolledBack []string
	// Left lists what the cleanup after a failure could not prove to be
	// this transaction's, or could not remove.
	Left []Leftover
	// JournalKept: the root keeps the intent journal for the next writer.
	JournalKept bool
}

// Leftover is a path a failed transaction's cleanup left in place.
type Leftover struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Apply applies ch under the lock. It returns a nil error when every write
// and delete took effect and the catalog was written; otherwise it settles
// the root (see the package documentation) and says what happened.
func (t *Txn) Apply(ch *Change) (*Result, error) {
	ctx := t.ctx
	res := &Result{}
	if len(ch.Writes) == 0 && len(ch.Deletes) == 0 {
		if ch.Final != nil {
			// The record's intent, if any, is of a change this one is not.
			if len(t.lk.Info().Intent) > 0 {
				if err := t.lk.SetIntent(ctx, nil); err != nil {
					return res, fmt.Errorf("lock record: %w; nothing was changed", err)
				}
			}
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
	a := &attempt{t: t, ch: ch, written: map[string]bool{}, deleted: map[string]bool{}, started: map[string]bool{}}
	if ch.Staged && len(ch.Writes) > 0 && t.st.Properties().Stage {
		a.staged = make([]storage.Staged, len(ch.Writes))
		if err := t.each(ctx, len(ch.Writes), a.stage, func(int) {}); err != nil {
			return a.unstaged(err)
		}
	}
	err := a.writeAll(ctx)
	if err == nil {
		err = t.each(ctx, len(ch.Deletes), func(ctx context.Context, i int) error {
			p := ch.Deletes[i]
			if err := t.lk.Fence(); err != nil {
				return err
			}
			a.start(p)
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
	// A retried upload (a dropped connection) may have left a temporary
	// file its cleanup could not reach: sweep the directories written to,
	// or keep the journal, so that the next writer sweeps the whole tree.
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
// was given an intent and this one fits (IntentCap), rewriting the record
// unless it carries exactly this intent; otherwise in .distributor.journal,
// removing a record's other intent first.
func (t *Txn) writeJournal(ctx context.Context, ch *Change) error {
	if err := t.lk.Fence(); err != nil {
		return err
	}
	data, s, err := intentOf(ch, t.runID, t.opts.Command, t.started)
	if err != nil {
		return err
	}
	inRecord := t.lk.Info().Intent
	if t.opts.Intent != nil && data != nil {
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
	size, err := s.Seek(0, io.SeekStart)
	if err == nil {
		size, err = io.Copy(io.Discard, s)
	}
	if err == nil {
		_, err = s.Seek(0, io.SeekStart)
	}
	if err == nil {
		_, err = t.st.Put(ctx, journal.Name, s, size, storage.IfVersion(""))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", journal.Name, err)
	}
	return nil
}

// encodeJournal streams ch's journal (journal.Stream), each write's op and
// record taken from ch as it is read.
func encodeJournal(ch *Change, runID, command string, started time.Time) (*journal.Stream, error) {
	j := &journal.Journal{RunID: runID, Command: command, Started: started, BaseVersion: string(ch.Base)}
	var op journal.Op
	return journal.NewStream(j, len(ch.Writes)+len(ch.Deletes), func(i int) *journal.Op {
		if i >= len(ch.Writes) {
			op = journal.Op{Op: journal.OpDelete, Path: ch.Deletes[i-len(ch.Writes)]}
			return &op
		}
		w := &ch.Writes[i]
		op = journal.Op{Op: journal.OpWrite, Path: w.Path, Existed: w.Existed, SHA256: w.SHA256, Size: w.Size, Record: w.Record}
		return &op
	})
}

// intentOf is ch's journal when it fits a lock record (IntentCap), else nil;
// a larger one is not encoded beyond the cap.
func intentOf(ch *Change, runID, command string, started time.Time) ([]byte, *journal.Stream, error) {
	s, err := encodeJournal(ch, runID, command, started)
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(s, IntentCap+1))
	if err != nil || len(data) > IntentCap {
		return nil, s, err
	}
	return data, s, nil
}

// dropJournal removes the journal once the root is settled; if that fails
// (or the fence lapsed), the next writer finds the catalog committed and
// only removes the journal. An intent in the lock record goes with the record (End).
func (t *Txn) dropJournal() {
	switch {
	case t.intentLive:
		t.intentLive = false
	case t.lk.Fence() == nil:
		if err := t.st.Delete(t.lk.Context(), journal.Name); err != nil {
			t.opts.Logger.Warn("remove journal", "root", t.st.String(), "err", err)
		}
	}
}

// writeCatalog writes e applied to the catalog at ch.Base and names its failure.
func (t *Txn) writeCatalog(ctx context.Context, e *catalog.Edit, ch *Change) error {
	err := t.putEdit(ctx, e, ch)
	fenced, isFenced := errors.AsType[*fencedError](err)
	switch cause := context.Cause(ctx); {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrPrecondition):
		return fmt.Errorf("write %s: it changed since it was read (another writer?): %w", catalog.FileName, err)
	case isFenced:
		return fenced.err
	case errors.Is(err, context.Canceled) && cause != nil && !errors.Is(cause, context.Canceled):
		// The lock cancelled the write (its lease lapsed, or it was
		// lost): say so, not just "context canceled".
		err = cause
	}
	return fmt.Errorf("write %s: %w", catalog.FileName, err)
}
