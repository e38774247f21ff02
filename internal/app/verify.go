package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
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
	m, err := a.openMaintRoot(ctx, t, false)
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
	ao := AuditOptions{Jobs: jobsFor(t.dest.Backend, opts.Jobs)}
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
		ao.Checked = func(path string, read int64) {
			a.OnEvent(Event{Kind: EventDone, Task: name, Path: path, Bytes: read})
		}
		defer a.OnEvent(Event{Kind: EventFinish, Task: name})
	}
	records := func(fn func(o *catalog.Output, l *listed) error) error {
		visit := func(o *catalog.Output, l *listed) error {
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
	return auditStream(ctx, m.store, records, opts.Quick, ao, rep)
}
