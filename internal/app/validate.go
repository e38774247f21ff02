package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/render"
	"github.com/distributor-dev/distributor/internal/report"
)

// ValidateOptions are the inputs of Validate.
type ValidateOptions struct {
	// Pipeline checks only this pipeline ("" every one).
	Pipeline string
	// Source checks this bundle directory instead of the configured sources.
	Source string
	Logger *slog.Logger
}

// Validate checks a configuration and the outputs the --source bundle (else
// each pipeline's readable configured source) would produce at every selected
// destination. It touches no storage.
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
	v := &validation{cfg: cfg, rep: rep, badTemplate: a.checkHost(cfg, pipelines, rep),
		manifests: map[string]*bundle.Manifest{}, planned: map[destKey][]string{}}
	if opts.Source != "" {
		if b := v.load(ctx, opts.Source); b != nil {
			rep.Source = sourceOf(b)
			for _, p := range pipelines {
				v.plan(ctx, p, b)
			}
		}
	} else if err := v.configuredSources(ctx, pipelines); err != nil {
		return nil, err
	}
	checkOverlaps(cfg, pipelines, v.manifests, v.planned, rep)
	return rep, nil
}

// validation is what Validate gathers: per pipeline the manifest planned and
// the paths planned at each destination.
type validation struct {
	cfg         *config.Config
	rep         *report.Validate
	badTemplate map[string]bool
	manifests   map[string]*bundle.Manifest
	planned     map[destKey][]string
}

// load loads the --source bundle; failing is a problem.
func (v *validation) load(ctx context.Context, dir string) *bundle.Bundle {
	b, err := bundle.Load(ctx, dir)
	v.warnUnlisted("", b, err)
	if err != nil {
		problem(v.rep, sourceErr(dir, err).Error())
		return nil
	}
	return b
}

// warnUnlisted warns, after who, of files bundle b (or the one refused with
// err: one may be the file meant to be listed) holds but does not list.
func (v *validation) warnUnlisted(who string, b *bundle.Bundle, err error) {
	var unlisted []string
	var ve *bundle.ValidationError
	switch {
	case errors.As(err, &ve):
		unlisted = ve.Unlisted
	case b != nil:
		unlisted = b.Unlisted
	}
	for _, u := range unlisted {
		v.rep.Warnings = append(v.rep.Warnings, fmt.Sprintf("%s%s is in the bundle directory but not in its manifest: ignored", who, u))
	}
}

// configuredSources plans each readable configured source as --source does;
// one that cannot be loaded (not sealed yet) is a note, as the run reads it
// later. Only the context's end is an error.
func (v *validation) configuredSources(ctx context.Context, pipelines []*config.Pipeline) error {
	type loaded struct {
		b   *bundle.Bundle
		err error
	}
	cache := map[string]loaded{} // by directory: pipelines sharing one read it once
	for _, p := range pipelines {
		if _, err := os.Stat(p.Source); err != nil {
			continue // checkHost warned
		}
		l, ok := cache[p.Source]
		if !ok {
			l.b, l.err = bundle.Load(ctx, p.Source)
			if ctx.Err() != nil {
				return fmt.Errorf("validate pipeline %s: %w", p.ID, context.Cause(ctx))
			}
			cache[p.Source] = l
		}
		v.warnUnlisted("pipeline "+p.ID+": ", l.b, l.err)
		if l.err != nil {
			v.rep.Notes = append(v.rep.Notes, fmt.Sprintf("pipeline %s: the configured source could not be loaded, so its outputs were not planned "+
				"(a bundle is often written just before the run): %v", p.ID, sourceErr(p.Source, l.err)))
			continue
		}
		v.rep.Sources = append(v.rep.Sources, report.ValidateSource{PipelineID: p.ID, Source: *sourceOf(l.b)})
		v.plan(ctx, p, l.b)
	}
	return nil
}

// plan plans b at every destination of p; a failure there is a problem.
func (v *validation) plan(ctx context.Context, p *config.Pipeline, b *bundle.Bundle) {
	m := b.Manifest
	v.manifests[p.ID] = &m
	for _, id := range p.Destinations {
		d, _ := v.cfg.Destination(id)
		if v.badTemplate[d.ID] {
			continue // reported once, by checkHost
		}
		vars := config.Vars{PipelineID: p.ID, DestinationID: d.ID, SourceID: m.ID, SourceCreated: m.Created}
		vo := report.ValidateOutputs{PipelineID: p.ID, DestinationID: d.ID}
		res, err := planAt(ctx, b, d, vars, &vo)
		if err != nil {
			problem(v.rep, fmt.Sprintf("pipeline %s, destination %s: %v", p.ID, d.ID, err))
		} else {
			paths := make([]string, len(res.Outputs))
			for i, o := range res.Outputs {
				paths[i] = o.Path
			}
			v.planned[destKey{p.ID, d.ID}] = paths
			for _, w := range res.Warnings { // broken links, filter patterns that match nothing
				v.rep.Warnings = append(v.rep.Warnings, fmt.Sprintf("pipeline %s, destination %s: %s", p.ID, d.ID, w))
			}
		}
		v.rep.Outputs = append(v.rep.Outputs, vo)
	}
}

func planAt(ctx context.Context, b *bundle.Bundle, d *config.Destination, vars config.Vars, vo *report.ValidateOutputs) (*render.Result, error) {
	root, err := config.Expand(d.Path, vars)
	if err != nil {
		return nil, err
	}
	vo.Root = root
	prefix, err := config.Expand(d.Paths.Prefix, vars)
	if err != nil {
		return nil, err
	}
	res, err := render.Plan(ctx, b, d, prefix)
	if err != nil {
		return nil, err
	}
	vo.Outputs, vo.PrimaryURL = len(res.Outputs), res.PrimaryURL
	return res, nil
}

func sourceOf(b *bundle.Bundle) *report.Source {
	m := b.Manifest
	return &report.Source{Path: b.Dir, ID: m.ID, Digest: m.Digest, Created: catalog.FormatTime(m.Created)}
}

// sourceErr wraps a source bundle's error; bundle's errors already name the directory.
func sourceErr(dir string, err error) error {
	if strings.HasPrefix(err.Error(), "bundle ") {
		return fmt.Errorf("source %w", err)
	}
	return fmt.Errorf("source bundle %s: %w", dir, err)
}
