package app

import (
	"context"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
)

// notifyDestination sends the notifications configured for a finished
// destination and records their outcome in rd. It is never called for a dry
// run.
//
// TODO(issue 7): webhook delivery.
func (a *App) notifyDestination(ctx context.Context, cfg *config.Config, p *report.Pipeline, rd *report.Destination) {
}
