package app

import (
	"context"
	"fmt"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/txn"
)

// ShowState reads, for `distributor state show`, the catalog of the root
// that a pipeline and one of its destinations select: every owner's
// outputs and the stored document itself. State none is not an error;
// legacy, invalid and future state are (exit 1), as are failures to open or
// read the root. Invalid options are a *UsageError.
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
	// The catalog, whole: state show prints every record.
	state, version, err := txn.ReadCatalog(ctx, st)
	if err != nil {
		return nil, err
	}
	if err := refuseShowState(st.String(), state); err != nil {
		return nil, err
	}
	// The stored bytes, for --output json, at the version classified.
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
	// Logged too, for --output json, which prints the stored document alone.
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

// refuseShowState says which unreadable state a root holds (nil for none
// and catalog).
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
