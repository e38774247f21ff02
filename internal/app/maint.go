package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// Root selects the destination root a maintenance call works on.
type Root struct {
	// Pipeline is the owner's pipeline ("": the only one, or the only one
	// publishing to Destination).
	Pipeline string
	// Destination is one of the pipeline's destinations ("": its only one).
	Destination string
	// Source is a bundle directory whose manifest fills the path's
	// {source_*} placeholders ("": the pipeline's configured source).
	Source string
}

// ConfigError is a configuration that cannot serve the command (exit status 2).
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

type maintTarget struct {
	dest  *config.Destination
	owner catalog.Owner
	head  report.Target // starts the command's report; Root is the expanded destination path
}

// resolveMaint checks command's options (*UsageError; a bad --source manifest is a
// plain error) and expands the root; --pipeline and --destination may go if only one qualifies.
func resolveMaint(cfg *config.Config, command string, opts Root) (*maintTarget, error) {
	if opts.Pipeline == "" {
		switch ps := publishers(cfg, opts.Destination); {
		case len(ps) == 1:
			opts.Pipeline = ps[0].ID
		case len(ps) == 0 && opts.Destination != "":
			return nil, &UsageError{fmt.Sprintf("no pipeline publishes to destination %q", opts.Destination)}
		default:
			return nil, &UsageError{fmt.Sprintf("%s needs --pipeline and --destination: it works on the one destination root they name (pipelines: %s)",
				command, pipelineList(cfg))}
		}
	}
	if opts.Destination == "" {
		if p, ok := cfg.Pipeline(opts.Pipeline); ok && len(p.Destinations) != 1 {
			return nil, &UsageError{fmt.Sprintf("%s needs --destination: pipeline %q publishes to %s; it works on one destination root",
				command, p.ID, strings.Join(p.Destinations, ", "))}
		} else if ok {
			opts.Destination = p.Destinations[0]
		}
	}
	p, err := pipelineFor(cfg, opts.Pipeline, opts.Destination)
	if err != nil {
		return nil, err
	}
	d, ok := cfg.Destination(opts.Destination)
	if !ok {
		return nil, &UsageError{fmt.Sprintf("unknown destination %q", opts.Destination)}
	}
	vars := config.Vars{PipelineID: p.ID, DestinationID: d.ID}
	if opts.Source != "" || config.NeedsSource(d.Path) {
		m, err := readManifest(cmp.Or(opts.Source, p.Source)) // else the pipeline's configured bundle
		switch {
		case err != nil && opts.Source != "":
			return nil, err
		case err != nil:
			return nil, &UsageError{fmt.Sprintf(
				"destination %q has a templated path %q that takes values from a source bundle, and the pipeline's source %s has no readable manifest (%v): "+
					"pass --source DIR with the bundle whose root %s should work on", d.ID, d.Path, p.Source, strings.TrimPrefix(err.Error(), "--source "), command)}
		}
		vars.SourceID, vars.SourceCreated = m.ID, m.Created
	}
	root, err := config.Expand(d.Path, vars)
	if err != nil {
		return nil, &UsageError{fmt.Sprintf("destination %q path: %v", d.ID, err)}
	}
	return &maintTarget{dest: d, owner: catalog.Owner{PipelineID: p.ID, DestinationID: d.ID},
		head: report.Target{Command: command, PipelineID: p.ID, DestinationID: d.ID, Root: root}}, nil
}

func readManifest(dir string) (*bundle.Manifest, error) {
	name := filepath.Join(dir, bundle.ManifestName)
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--source %s: %w", dir, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, bundle.MaxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("--source %s: read %s: %w", dir, bundle.ManifestName, err)
	}
	if len(data) > bundle.MaxManifestSize {
		return nil, fmt.Errorf("--source %s: %s is larger than %d bytes", dir, bundle.ManifestName, bundle.MaxManifestSize)
	}
	m, err := bundle.ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("--source %s: %s: %w", dir, bundle.ManifestName, err)
	}
	return m, nil
}

func (a *App) openMaint(ctx context.Context, t *maintTarget) (storage.Store, error) {
	st, err := a.Open(ctx, t.dest, t.head.Root)
	if err != nil {
		return nil, fmt.Errorf("open destination %s at %s: %w", t.dest.ID, t.head.Root, err)
	}
	return st, nil
}

// maintRoot is a target's root, opened, locked when the command writes, and
// its catalog classified; nothing is held whole (each pass streams again).
type maintRoot struct {
	store    storage.Store
	state    catalog.State
	version  storage.Version
	cat      *maintCatalog // the valid catalog (nil for any other state)
	warnings []string      // a dead writer's journal (pending), for commands that do not recover
	pending  bool
	tx       *txn.Txn // for a command that writes (nil otherwise)
}

func (m *maintRoot) close() {
	m.cat.close()
	if m.tx != nil {
		m.tx.End()
	}
	m.store.Close()
}

// openMaintRoot opens t's store, begins a transaction when write is set, and
// reads its state; the context returned is the transaction's. On error
// nothing stays open, except with refuseState's error.
func (a *App) openMaintRoot(ctx context.Context, t *maintTarget, write bool) (*maintRoot, context.Context, error) {
	st, err := a.openMaint(ctx, t)
	if err != nil {
		return nil, ctx, err
	}
	m := &maintRoot{store: st}
	if write {
		if m.tx, err = a.begin(ctx, st, t.dest, t.head.Command, 1, nil); err != nil {
			st.Close()
			return nil, ctx, err
		}
		ctx = m.tx.Context()
	}
	// No copy under the lock on a store that rewrites in place (readMaintCatalog).
	keepCopy := !write || !st.Properties().Rewrite
	if m.state, m.version, m.cat, err = readMaintCatalog(ctx, st, keepCopy); err == nil {
		m.pending, err = journalPresent(ctx, st)
	}
	if err != nil {
		m.close()
		return nil, ctx, err
	}
	if m.pending {
		m.warnings = []string{fmt.Sprintf("%s: a writer died at this root (or is running) and left its intent journal; "+
			"the catalog may not match storage until the next run, prune --apply or reconcile-state on it recovers the root", journal.Name)}
	}
	return m, ctx, refuseState(t.head.Command, st.String(), t.owner, m.state)
}

func (a *App) maintFailed(f *report.Failure, t *maintTarget, err error) {
	f.Fail(err)
	a.logFailure(t.head.Command+" failed", t.owner, err)
}

// refuseState refuses legacy, invalid and future state.
func refuseState(command, root string, owner catalog.Owner, s catalog.State) error {
	switch s.Status {
	case catalog.StatusNone, catalog.StatusCatalog:
		return nil
	case catalog.StatusLegacy:
		return fmt.Errorf("%s at %s is legacy state (%v): %s works only on a schema-%d catalog; "+
			"`distributor run` on this destination replaces legacy state", catalog.FileName, root, s.Problem, command, catalog.SchemaVersion)
	case catalog.StatusFuture:
		return fmt.Errorf("%s at %s is future state (%v): upgrade distributor; %s leaves it untouched",
			catalog.FileName, root, s.Problem, command)
	default:
		return fmt.Errorf("%s at %s is invalid state (%v): %s never rewrites invalid state\n%s",
			catalog.FileName, root, s.Problem, command, catalog.InvalidChoices(owner, nil))
	}
}

// dropping is the edit removing paths' records, stamped as written now.
func (a *App) dropping(h catalog.Header, paths []string) *catalog.Edit {
	h.UpdatedAt = a.Now()
	if a.Version != "" {
		h.DistributorVersion = a.Version
	}
	return &catalog.Edit{Header: h, Delete: paths}
}

func (m *maintRoot) change() *txn.Change {
	ch := &txn.Change{Base: m.version}
	if m.cat != nil {
		ch.BaseCopy, ch.BaseCanonical = m.cat.baseCopy(), m.cat.canonical && m.cat.sorted
	}
	return ch
}

func ownedBy(owner catalog.Owner, allOwners bool) func(*catalog.Output) bool {
	return func(o *catalog.Output) bool { return allOwners || o.Owner() == owner }
}

// publishers returns the pipelines publishing to destination (all for "").
func publishers(cfg *config.Config, destination string) []*config.Pipeline {
	var out []*config.Pipeline
	for i := range cfg.Pipelines {
		if p := &cfg.Pipelines[i]; destination == "" || slices.Contains(p.Destinations, destination) {
			out = append(out, p)
		}
	}
	return out
}

// pipelineFor returns pipeline id, which must publish to destination unless "".
func pipelineFor(cfg *config.Config, id, destination string) (*config.Pipeline, error) {
	p, ok := cfg.Pipeline(id)
	if !ok {
		return nil, &UsageError{fmt.Sprintf("unknown pipeline %q (configured: %s)", id, pipelineIDs(cfg))}
	}
	if destination != "" && !slices.Contains(p.Destinations, destination) {
		return nil, &UsageError{fmt.Sprintf("pipeline %q does not publish to destination %q (it publishes to %v)", p.ID, destination, p.Destinations)}
	}
	return p, nil
}

func pipelineIDs(cfg *config.Config) []string {
	ids := make([]string, len(cfg.Pipelines))
	for i, p := range cfg.Pipelines {
		ids[i] = p.ID
	}
	return ids
}

func pipelineList(cfg *config.Config) string { return strings.Join(pipelineIDs(cfg), ", ") }

// ShowOptions are the inputs of ShowState.
type ShowOptions struct {
	Root
	Logger *slog.Logger
}

// ShowState reads a root's catalog for `distributor state show`: its top
// fields, and outputs and stored document that the report streams from a copy
// until its Close. State none is not an error; legacy, invalid and future are.
func (a *App) ShowState(ctx context.Context, cfg *config.Config, opts ShowOptions) (*report.StateShow, error) {
	t, err := resolveMaint(cfg, "state show", opts.Root)
	if err != nil {
		return nil, err
	}
	// The copy is kept: the text table reads the records twice.
	m, _, err := a.openMaintRoot(ctx, t, false)
	if m == nil {
		return nil, err
	}
	defer m.store.Close() // the report closes m.cat
	if err := refuseShowState(m.store.String(), m.state); err != nil {
		return nil, err
	}
	rep := &report.StateShow{Target: t.head, State: string(m.state.Status), Warnings: m.warnings}
	rep.Root = m.store.String()
	if c := m.cat; c != nil {
		src := &shownCatalog{ctx: ctx, root: rep.Root, c: c, raw: c.baseCopy()}
		if src.raw == nil {
			// Not sorted: c is a sorted copy, the stored bytes are read again.
			if src.raw, err = spoolStored(ctx, m.store, m.version); err != nil {
				c.close()
				return nil, err
			}
		}
		rep.SchemaVersion, rep.Header, rep.Count = catalog.SchemaVersion, c.Header, c.Count
		rep.Stream(src)
	}
	// Logged too, for --output json, which prints the stored document alone.
	for _, w := range rep.Warnings {
		a.Logger.Warn(w, "root", rep.Root)
	}
	return rep, nil
}

// spoolStored copies the catalog, still at version, into a Spool.
func spoolStored(ctx context.Context, st storage.Store, version storage.Version) (*txn.Spool, error) {
	data, ver, err := st.Get(ctx, catalog.FileName)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", catalog.FileName, st, err)
	}
	if ver != version {
		return nil, fmt.Errorf("%s at %s changed while it was being read (a writer is at work): try again", catalog.FileName, st)
	}
	raw := txn.NewSpool()
	if _, err := raw.Write(data); err != nil {
		raw.Close()
		return nil, err
	}
	return raw, nil
}

// shownCatalog streams records from c, stored bytes from raw (c's copy if sorted).
type shownCatalog struct {
	ctx  context.Context
	root string
	c    *maintCatalog
	raw  *txn.Spool
}

func (s *shownCatalog) Outputs(fn func(*catalog.Output) error) error {
	var fnErr error
	err := s.c.each(s.ctx, func(o *catalog.Output) error {
		fnErr = fn(o)
		return fnErr
	})
	if err != nil && fnErr == nil {
		return fmt.Errorf("read the copy of %s at %s: %w", catalog.FileName, s.root, err)
	}
	return err
}

func (s *shownCatalog) WriteRaw(w io.Writer) error {
	r, err := s.raw.Open()
	if err == nil {
		_, err = io.Copy(w, r)
	}
	return err
}

func (s *shownCatalog) Close() error {
	if s.raw != s.c.copy {
		s.raw.Close()
	}
	s.c.close()
	return nil
}

func refuseShowState(root string, s catalog.State) error {
	switch s.Status {
	case catalog.StatusNone, catalog.StatusCatalog:
		return nil
	case catalog.StatusLegacy:
		return fmt.Errorf("state legacy: %s at %s has schema_version %d, superseded legacy state that this distributor does not read (`distributor run` on this destination replaces it)",
			catalog.FileName, root, s.SchemaVersion)
	case catalog.StatusFuture:
		return fmt.Errorf("state future: %s at %s has schema_version %d, newer than this distributor understands (%d): upgrade distributor",
			catalog.FileName, root, s.SchemaVersion, catalog.SchemaVersion)
	default:
		return fmt.Errorf("state invalid: %s at %s: %v", catalog.FileName, root, s.Problem)
	}
}

// UnlockOptions are the inputs of Unlock.
type UnlockOptions struct {
	Root
	// Force removes a lock whose holder looks alive.
	Force  bool
	Logger *slog.Logger
}

// Unlock removes a stale lock (lease expired, or a gone holder on this host)
// or, with Force, any. The next writer recovers, from the journal (an intent
// in the record moves there first: lock.MoveIntent).
func (a *App) Unlock(ctx context.Context, cfg *config.Config, opts UnlockOptions) (*report.Unlock, error) {
	t, err := resolveMaint(cfg, "unlock", opts.Root)
	if err != nil {
		return nil, err
	}
	rep := &report.Unlock{Target: t.head}
	fail := func(err error) (*report.Unlock, error) { rep.Fail(err); return rep, nil }
	st, err := a.openMaint(ctx, t)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	rep.Root = st.String()
	info, _, err := lock.Read(ctx, st)
	if errors.Is(err, storage.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return fail(fmt.Errorf("read %s: %w", lock.Name, err))
	}
	rep.Locked = true
	rep.Holder = &report.LockHolder{ID: info.ID, Host: info.Host, PID: info.PID, Command: info.Command,
		Acquired: report.FormatLockTime(info.Acquired), ExpiresAt: report.FormatLockTime(info.ExpiresAt)}
	rep.Stale = (&lock.Locker{Store: st, Now: a.Now}).Stale(info)
	if !rep.Stale && !opts.Force {
		return fail(fmt.Errorf("the holder looks alive (lease until %s): wait for it, or, if you are sure no run is active on this root, rerun with --force", rep.Holder.ExpiresAt))
	}
	// The holder's unsettled change is the next writer's to recover: its
	// intent goes to the journal before the record goes.
	if err := lock.MoveIntent(ctx, st, info); err != nil {
		return fail(fmt.Errorf("%w; the lock was not removed", err))
	}
	// A waiter may have taken over (moving the same intent): not ours to remove.
	if now, _, err := lock.Read(ctx, st); err == nil && now.ID != info.ID {
		return fail(fmt.Errorf("the lock changed hands while unlocking (now held by %s): it was not removed", now))
	}
	if err := st.Delete(ctx, lock.Name); err != nil {
		return fail(fmt.Errorf("remove %s: %w", lock.Name, err))
	}
	rep.Removed = true
	a.Logger.Warn("removed the lock of a destination root", "root", rep.Root, "holder", info.String(), "stale", rep.Stale)
	return rep, nil
}
