package app

import (
	"context"
	"fmt"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
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
	s, err := readState(ctx, st)
	if err != nil {
		return nil, err
	}
	if err := refuseShowState(st.String(), s.state); err != nil {
		return nil, err
	}
	return &report.StateShow{Command: "state show", PipelineID: t.owner.PipelineID, DestinationID: t.owner.DestinationID,
		Root: st.String(), State: string(s.state.Status), Catalog: s.state.Catalog, Raw: s.raw}, nil
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
