package app

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/journal"
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
