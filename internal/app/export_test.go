package app

import (
	"context"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
)

// This file holds what only tests use.

// SelectPrune is Prune's selection over a slice of outputs (see
// selectPublications): the publications of owner that the policy selects,
// oldest first. outputs is not modified.
func SelectPrune(outputs []catalog.Output, owner catalog.Owner, now time.Time, olderThan time.Duration, keepMin int) []Publication {
	s, _ := selectPublications(func(fn func(*catalog.Output) error) error {
		for i := range outputs {
			fn(&outputs[i])
		}
		return nil
	}, owner, now, olderThan, keepMin)
	return s.publications()
}

// Run is Publish with the run's document, report.RunOf its result.
func (a *App) Run(ctx context.Context, cfg *config.Config, opts RunOptions) (*report.Run, error) {
	o, err := a.Publish(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	return report.RunOf(o), nil
}
