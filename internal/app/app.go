// Package app holds distributor's use cases, behind the public library.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/storage/retry"
	"github.com/distributor-dev/distributor/internal/txn"
)

// OpenStore opens the storage of a destination at its resolved root.
type OpenStore func(ctx context.Context, d *config.Destination, root string) (storage.Store, error)

// App carries what every use case needs. The zero value is not usable: use New.
type App struct {
	Tuning // Version is what documents and locks record
	Logger *slog.Logger
	Now    func() time.Time
	Open   OpenStore
	Getenv func(string) string // the environment (secrets, credentials)
	// OnEvent, when set, receives progress; EventDone comes from transfer
	// goroutines, so it must be safe for concurrent use.
	OnEvent func(Event)
}

// Tuning holds what a program rarely sets; its zero value is the defaults.
type Tuning struct {
	// LockTimeout is how long a writing call waits for a root another
	// writer holds (0: 2 minutes; negative: fail at once).
	LockTimeout time.Duration
	// LockLease is the lease of the lock a writer holds, renewed every
	// quarter (0: 1 minute; see docs/design.md, Fencing).
	LockLease time.Duration
	// LockSkewAllowance is how much longer than a holder's lease a waiter
	// watches a silent lock before taking it over (0: the default).
	LockSkewAllowance time.Duration
	// Version is recorded as distributor_version in documents and locks
	// ("": this module's version as the program was built with it).
	Version string
}

// EventKind says what an Event reports.
type EventKind int

// The events of a transfer or a check, in the order they come for one task.
const (
	// EventStart: a task begins; Files and Bytes say how much it will do.
	EventStart EventKind = iota + 1
	// EventDone: one output was written (run, prune) or checked (verify);
	// Path names it and Bytes is its size or the bytes read.
	EventDone
	// EventFinish: the task ended, whatever happened.
	EventFinish
)

// Event is progress: a run's writes to one destination, or a verify's
// checks, are one task named by Task ("weather.daily -> latest").
type Event struct {
	Kind  EventKind
	Task  string
	Path  string
	Files int
	Bytes int64
}

// New returns an App with the default store opener and clock.
func New(version string, logger *slog.Logger) *App {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &App{Tuning: Tuning{Version: version}, Logger: logger, Now: time.Now, Getenv: os.Getenv}
	a.Open = a.DefaultOpenStore
	return a
}

// ErrBackendUnsupported is returned for backends this build cannot open.
var ErrBackendUnsupported = errors.New("backend not supported by this build")

// DefaultOpenStore is OpenDestination with a.Getenv; remote stores come in a
// retry.Store whose retries are logged as warnings.
func (a *App) DefaultOpenStore(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
	st, err := OpenDestination(ctx, d, root, a.Getenv)
	if b, _ := registry.Lookup(d.Backend); err != nil || !b.Remote {
		return st, err
	}
	return retry.New(st, retry.Options{OnRetry: func(op, path string, attempt int, err error) {
		a.Logger.Warn("retrying a storage operation after a transient failure", "destination", d.ID,
			"op", op, "path", path, "attempt", attempt, "err", report.Short(err))
		if short := report.Short(err); short != err.Error() {
			a.Logger.Debug("the whole error of that attempt", "destination", d.ID, "op", op, "path", path, "attempt", attempt, "err", err)
		}
	}}), nil
}

// OpenDestination opens d's storage at its resolved root; getenv supplies the
// environment (SSH_AUTH_SOCK, AWS credentials). SFTP connects here, S3 at the
// first read: either way bad credentials fail before anything is written.
func OpenDestination(ctx context.Context, d *config.Destination, root string, getenv func(string) string) (storage.Store, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	b, ok := registry.Lookup(d.Backend)
	if !ok {
		return nil, fmt.Errorf("destination %s: backend %q: %w", d.ID, d.Backend, ErrBackendUnsupported)
	}
	return b.Open(ctx, d.Settings, root, getenv)
}

// begin starts a write transaction (txn.Begin: probe, lock, recover, sweep),
// waiting up to LockTimeout; writers call it before reading what they plan
// from. A command that planned its change before it locks (run) passes it as
// intent, which travels in the lock record (txn.Options.Intent).
func (a *App) begin(ctx context.Context, st storage.Store, d *config.Destination, command string, jobs int,
	intent *txn.Change) (*txn.Txn, error) {
	return txn.Begin(ctx, txn.Options{
		Store: st, Command: command, Logger: a.Logger, Jobs: jobs, Now: a.Now, Intent: intent,
		SingleWriter: d.SingleWriter, Retries: func() int { return retry.Count(st) },
		Lock: lock.Locker{Wait: a.LockTimeout, NoWait: a.LockTimeout < 0, Now: a.Now, Lease: a.LockLease,
			SkewAllowance: a.LockSkewAllowance, OnWait: func(h lock.Info, waited, limit time.Duration) {
				a.Logger.Warn(fmt.Sprintf("waiting for the lock of %s, held by %s: waited %s of up to %s (--lock-timeout)",
					st, h, waited.Round(time.Second), limit), "destination", d.ID)
			}},
	})
}

// RootState is a destination root's catalog state (Version for compare-and-swap)
// and listing.
type RootState struct {
	Store       storage.Store
	State       catalog.State
	Version     storage.Version
	CatalogInfo storage.Info // the catalog's listing entry: size and time tell a change cheaply
	ReadAt      time.Time
	// Listing maps object paths to sizes (no temporary objects): all, or,
	// when Partial, those a run looked up.
	Listing map[string]int64
	Partial bool
	Known   *plan.Known // for a run over a valid catalog (State.Catalog is then nil)
	// Pending: an intent journal is there; after a partial read, known once
	// journalPresent looked.
	Pending          bool
	CatalogCopy      *txn.Spool      // a remote root's catalog bytes at Version; Close releases
	CatalogCanonical bool            // txn.Change.BaseCanonical
	recordedDirs     map[string]bool // on S3, parent keys with records below (lookUp)
}

// logFailure logs err in brief, and whole, when longer, at info level (-v).
func (a *App) logFailure(msg string, owner catalog.Owner, err error) {
	brief := report.Brief(err)
	a.Logger.Error(msg, "pipeline", owner.PipelineID, "destination", owner.DestinationID, "err", brief)
	if brief != err.Error() {
		a.Logger.Info(msg+": the whole error", "pipeline", owner.PipelineID, "destination", owner.DestinationID, "err", err)
	}
}
