// Package app holds distributor's use cases, the engine behind the public
// library (the module's root package): each of its functions makes one call
// here.
package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
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
	Version string
	Logger  *slog.Logger
	Now     func() time.Time
	Open    OpenStore
	// Getenv reads the environment (webhook secrets, credentials): tests
	// replace it.
	Getenv func(string) string
	// LockTimeout is how long a writer waits for a root's lock held by
	// another live process (0: 2m; negative: do not wait).
	LockTimeout time.Duration
	// LockLease and LockSkewAllowance tune the locks this App takes (0:
	// the lock package's defaults, lock.Locker).
	LockLease         time.Duration
	LockSkewAllowance time.Duration
	Progress          Progress // when set, receives transfer events
}

// New returns an App with the default store opener and clock.
func New(version string, logger *slog.Logger) *App {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &App{Version: version, Logger: logger, Now: time.Now, Getenv: os.Getenv}
	a.Open = a.DefaultOpenStore
	return a
}

// ErrBackendUnsupported is returned for backends this build cannot open.
var ErrBackendUnsupported = errors.New("backend not supported by this build")

// DefaultOpenStore is OpenDestination with a.Getenv, New's a.Open. Remote
// stores come wrapped in a retry.Store, whose retries are logged here as
// warnings.
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

// Root is what a command learns by opening a destination root: its catalog
// state (with the version for compare-and-swap) and a listing of its objects.
type Root struct {
	Store   storage.Store
	State   catalog.State
	Version storage.Version
	// CatalogInfo is the catalog's listing entry (zero when absent): its
	// size and modification time tell cheaply whether it changed since.
	CatalogInfo storage.Info
	ReadAt      time.Time // when the read started
	// Listing maps object paths to sizes (temporary objects excluded):
	// every object, or, when Partial, the ones a run looked up.
	Listing map[string]int64
	Partial bool
	// Known holds, for a run over a valid catalog, the records its plan
	// needs (State.Catalog is then nil: the catalog was streamed).
	Known *plan.Known
	// Pending says the root holds an intent journal (a writer died there,
	// or is running). After a partial read, known once journalPresent looked.
	Pending bool
	// CatalogCopy holds the bytes of the catalog at Version as a run read
	// them from a remote root (nil otherwise); Close releases it.
	CatalogCopy *txn.Spool
	// CatalogCanonical: every record of the catalog at Version is laid out
	// as distributor writes it (txn.Change.BaseCanonical).
	CatalogCanonical bool
	// recordedDirs, on S3, holds the parent keys of planned paths below
	// which the catalog records an output (see lookUp).
	recordedDirs map[string]bool
}

// logFailure logs err in brief as an error, and whole, when longer, at info
// level (-v).
func (a *App) logFailure(msg string, owner catalog.Owner, err error) {
	brief := report.Brief(err)
	a.Logger.Error(msg, "pipeline", owner.PipelineID, "destination", owner.DestinationID, "err", brief)
	if brief != err.Error() {
		a.Logger.Info(msg+": the whole error", "pipeline", owner.PipelineID, "destination", owner.DestinationID, "err", err)
	}
}
