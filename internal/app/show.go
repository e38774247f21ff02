package app

import (
	"context"
	"fmt"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/txn"
)

// ShowState reads the catalog of the root that a pipeline and one of its
// destinations select, for `distributor state show`. It is read-only. The
// result holds every owner's outputs and the stored document itself.
//
// A root without a catalog (state none) is not an error: the result says
// so. Legacy, invalid and future state are errors (exit 1) that say which
// state was found; so are failures to open or read the root. Invalid
// options are a *UsageError.
func (a *App) ShowState(ctx context.Context, cfg *config.Config, opts MaintOptions) (*report.StateShow, error) {
	t, err := resolveMaint(cfg, "state show", opts)
	if err != nil {
		return nil, err
	}
	st, err := a.openMaint(ctx, t)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	// The catalog, whole: state show prints every record (and, for
	// --output json, the stored document). The root is not listed: only
	// whether it holds a dead writer's journal matters.
	state, version, err := txn.ReadCatalog(ctx, st)
	if err != nil {
		return nil, err
	}
	if err := refuseShowState(st.String(), state); err != nil {
		return nil, err
	}
	// The stored bytes, for --output json: the same version ReadCatalog
	// classified, or the catalog changed in between.
	var raw []byte
	if state.Status == catalog.StatusCatalog {
		data, ver, err := st.Get(ctx, catalog.FileName)
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", catalog.FileName, st, err)
		}
		if ver != version {
			return nil, fmt.Errorf("%s at %s changed while it was being read (a writer is at work): try again", catalog.FileName, st)
		}
		raw = data
	}
	rep := &report.StateShow{Target: t.head, State: string(state.Status), Catalog: state.Catalog, Raw: raw}
	rep.Root = st.String()
	// A dead writer's journal: the catalog may not match storage until a
	// writing command recovers the root. Logged too, for --output json,
	// which prints the stored document alone.
	pending, err := journalPresent(ctx, st)
	if err != nil {
		return nil, err
	}
	if pending {
		rep.Warnings = journalWarning()
		for _, w := range rep.Warnings {
			a.Logger.Warn(w, "root", rep.Root)
		}
	}
	return rep, nil
}

// refuseShowState says which unreadable state a root holds; nil for none
// and catalog.
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
