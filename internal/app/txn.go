package app

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/retry"
	"github.com/distributor-dev/distributor/internal/txn"
)

// Content opens the bytes of a planned write.
type Content func(ctx context.Context, it plan.Item) (io.ReadCloser, error)

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

// runChange turns a plan into its change: writes (records, for recovery),
// deletes, the final catalog and a partial one (plan.Settle); shape completes writes.
func runChange(in plan.Input, p *plan.Plan, base storage.Version, content Content, shape func(*txn.Write)) *txn.Change {
	now := in.Now.UTC().Truncate(time.Second)
	ch := &txn.Change{Base: base, Final: p.Edit}
	items := make(map[string]plan.Item, len(p.Items))
	for _, it := range p.Items {
		items[it.Path] = it
		switch it.Op {
		case plan.OpCreate, plan.OpOverwrite:
			w := txn.Write{Path: it.Path, Existed: it.Op == plan.OpOverwrite, SHA256: it.Output.SHA256, Size: it.Output.Size,
				Record: plan.Record(in, it, now),
				Open:   func(ctx context.Context) (io.ReadCloser, error) { return content(ctx, it) }}
			if it.Previous != nil {
				w.Previous = &txn.Digest{SHA256: it.Previous.SHA256, Size: it.Previous.Size}
			}
			if shape != nil {
				shape(&w)
			}
			ch.Writes = append(ch.Writes, w)
		case plan.OpDelete:
			ch.Deletes = append(ch.Deletes, it.Path)
		}
	}
	ch.Partial = func(done []string) *catalog.Edit {
		di := make([]plan.Item, 0, len(done))
		for _, path := range done {
			di = append(di, items[path])
		}
		return plan.Settle(in, p, di)
	}
	return ch
}
