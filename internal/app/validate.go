package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/render"
	"github.com/distributor-dev/distributor/internal/report"
)

// ValidateOptions are the inputs of `distributor validate`.
type ValidateOptions struct {
	Pipeline string // "" = every pipeline
	Source   string // "" = configuration only
}

// Validate checks a loaded configuration and, with a source, that bundle and
// the outputs it would produce at every selected destination. It touches no
// storage.
func (a *App) Validate(ctx context.Context, cfg *config.Config, opts ValidateOptions) (*report.Validate, error) {
	rep := &report.Validate{Command: "validate", Config: cfg.File, Valid: true,
		Pipelines: len(cfg.Pipelines), Destinations: len(cfg.Destinations), Problems: []string{}, Outputs: []report.ValidateOutputs{}}
	pipelines := publishers(cfg, "")
	if opts.Pipeline != "" {
		p, err := pipelineFor(cfg, opts.Pipeline, "")
		if err != nil {
			return nil, err
		}
		pipelines = []*config.Pipeline{p}
	}
	badTemplate := a.checkHost(cfg, pipelines, rep)
	if opts.Source == "" {
		checkOverlaps(cfg, pipelines, nil, nil, rep)
		return rep, nil
	}
	b, err := bundle.Load(ctx, opts.Source)
	if err != nil {
		problem(rep, sourceErr(opts.Source, err).Error())
		checkOverlaps(cfg, pipelines, nil, nil, rep)
		return rep, nil
	}
	planned := map[destKey][]string{}
	m := b.Manifest
	rep.Source = &report.Source{Path: b.Dir, ID: m.ID, Digest: m.Digest, Created: catalog.FormatTime(m.Created)}
	for _, u := range b.Unlisted {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s is in the bundle directory but not in its manifest: ignored", u))
	}
	for _, p := range pipelines {
		for _, id := range p.Destinations {
			d, _ := cfg.Destination(id)
			if badTemplate[d.ID] {
				continue // reported once, by checkHost
			}
			vars := config.Vars{PipelineID: p.ID, DestinationID: d.ID, SourceID: m.ID, SourceCreated: m.Created}
			vo := report.ValidateOutputs{PipelineID: p.ID, DestinationID: d.ID}
			root, err := config.Expand(d.Path, vars)
			if err == nil {
				vo.Root = root
				var prefix string
				prefix, err = config.Expand(d.Paths.Prefix, vars)
				if err == nil {
					var res *render.Result
					res, err = render.Plan(ctx, b, d, prefix)
					if err == nil {
						vo.Outputs = len(res.Outputs)
						vo.PrimaryURL = res.PrimaryURL
						paths := make([]string, len(res.Outputs))
						for i, o := range res.Outputs {
							paths[i] = o.Path
						}
						planned[destKey{p.ID, d.ID}] = paths
					}
				}
			}
			if err != nil {
				problem(rep, fmt.Sprintf("pipeline %s, destination %s: %v", p.ID, d.ID, err))
			}
			rep.Outputs = append(rep.Outputs, vo)
		}
	}
	checkOverlaps(cfg, pipelines, &m, planned, rep)
	return rep, nil
}

// sourceErr wraps the error of a source bundle that could not be loaded or
// checked; the bundle package's errors already name the directory.
func sourceErr(dir string, err error) error {
	if strings.HasPrefix(err.Error(), "bundle ") {
		return fmt.Errorf("source %w", err)
	}
	return fmt.Errorf("source bundle %s: %w", dir, err)
}
