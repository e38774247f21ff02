package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/render"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/txn"
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
	pipelines, err := selectPipelines(cfg, RunOptions{Pipelines: []string{opts.Pipeline}}, 0) // as run selects them
	if err != nil {
		return nil, err
	}
	v := &validation{cfg: cfg, rep: rep, badTemplate: a.checkHost(cfg, pipelines, rep),
		manifests: map[string]*bundle.Manifest{}, planned: map[destKey][]string{}}
	if opts.Source != "" { // failing to load it is a problem
		b, err := bundle.Load(ctx, opts.Source)
		v.warnUnlisted("", b, err)
		if err != nil {
			problem(rep, sourceErr(opts.Source, err).Error())
		} else {
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
	if err == nil {
		vo.Outputs, vo.PrimaryURL = len(res.Outputs), res.PrimaryURL
	}
	return res, err
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

type destKey struct{ pipeline, destination string }

func problem(rep *report.Validate, msg string) {
	rep.Valid = false
	rep.Problems = append(rep.Problems, msg)
}

// checkHost checks what runs need on this host: missing files (templates must
// parse) and secrets are problems, a missing source a warning (often written
// just before the run). It returns the destinations whose template is broken.
func (a *App) checkHost(cfg *config.Config, pipelines []*config.Pipeline, rep *report.Validate) map[string]bool {
	badTemplate := map[string]bool{}
	seen := map[string]bool{}
	if cfg.MetricsFile != "" {
		dir := filepath.Dir(cfg.MetricsFile)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() { // following links
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("metrics_file %s: directory %s does not exist: a run cannot write its metrics there (create it, or fix metrics_file)",
				cfg.MetricsFile, dir))
		}
	}
	for _, p := range pipelines {
		if _, err := os.Stat(p.Source); errors.Is(err, fs.ErrNotExist) {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("pipeline %s: source %s does not exist (yet): a run fails for this pipeline until a bundle is written there", p.ID, p.Source))
		} else if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("pipeline %s: source %s: %v", p.ID, p.Source, err))
		}
		for _, id := range p.Destinations {
			if seen[id] {
				continue
			}
			seen[id] = true
			d, ok := cfg.Destination(id)
			if !ok {
				continue
			}
			for _, w := range backendWarnings(d) {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("destination %s: %s", d.ID, w))
			}
			for _, f := range d.LocalFiles { // each must be readable
				if file, err := os.Open(f.Path); err != nil {
					problem(rep, fmt.Sprintf("destination %s: %s %s: %v", d.ID, f.Field, f.Path, errors.Unwrap(err))) // a *PathError: its cause
				} else {
					file.Close()
				}
			}
			if d.Markdown.Template != "" {
				if err := render.CheckTemplate(d.Markdown.Template); err != nil {
					badTemplate[d.ID] = true
					problem(rep, fmt.Sprintf("destination %s: %v", d.ID, err))
				}
			}
		}
	}
	for _, m := range a.missingSecrets(cfg) {
		problem(rep, m+" (run exits 2 until it is set)")
	}
	return badTemplate
}

// backendWarnings are what d's backend says its settings make unsafe, and
// the compress encodings an object store ignores (spec 3.4).
func backendWarnings(d *config.Destination) []string {
	b, ok := registry.Lookup(d.Backend)
	var ws []string
	if ok && b.Warnings != nil {
		ws = b.Warnings(d.Settings)
	}
	if c := d.Compress; ok && c != nil && !b.Properties.Directories {
		if ignored := slices.DeleteFunc(slices.Clone(c.Encodings), func(e string) bool { return e == "gzip" }); len(ignored) > 0 {
			ws = append(ws, fmt.Sprintf("compress.encodings %s: ignored on %s, which serves no content negotiation: only gzip applies there (each matching object stored gzip-compressed, with Content-Encoding: gzip)",
				strings.Join(ignored, ", "), b.Title))
		}
	}
	return ws
}

func within(outer, inner string) bool {
	if outer == "/" {
		return inner != "/"
	}
	return strings.HasPrefix(inner, outer+"/")
}

// checkOverlaps finds a pipeline's destinations at one root with overlapping
// outputs: by the planned manifest and paths, else by paths.prefix. Nested
// roots get a warning.
func checkOverlaps(cfg *config.Config, pipelines []*config.Pipeline, manifests map[string]*bundle.Manifest, planned map[destKey][]string, rep *report.Validate) {
	for _, p := range pipelines {
		m := manifests[p.ID]
		type dest struct {
			d      *config.Destination
			server string // config.Location, "" locally
			root   string // a "/"-path on server
			prefix string
		}
		var ds []dest
		for _, id := range p.Destinations {
			d, ok := cfg.Destination(id)
			if !ok {
				continue
			}
			vars := config.Vars{PipelineID: p.ID, DestinationID: d.ID, SourceID: "source", SourceCreated: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}
			if m != nil {
				vars.SourceID, vars.SourceCreated = m.ID, m.Created
			}
			root, err := config.Expand(d.Path, vars)
			prefix, perr := config.Expand(d.Paths.Prefix, vars)
			if err != nil || perr != nil {
				continue
			}
			if b, _ := registry.Lookup(d.Backend); b.Path == storage.PathLocal {
				root = strings.ReplaceAll(root, `\`, "/") // a Windows path
			}
			ds = append(ds, dest{d, config.Location(d), path.Clean("/" + root), prefix})
		}
		for i := range ds {
			for j := i + 1; j < len(ds); j++ {
				x, y := ds[i], ds[j]
				if x.server != y.server {
					continue
				}
				switch {
				case x.root == y.root:
					sameRoot(p, x.d, y.d, x.root, x.prefix, y.prefix, planned, rep)
				case within(y.root, x.root):
					x, y = y, x // x is the outer one
					fallthrough
				case within(x.root, y.root):
					rep.Warnings = append(rep.Warnings, fmt.Sprintf(
						"pipeline %s: the root of destination %s (%s) is inside the root of destination %s (%s): runs to %s see %s's files, catalog and lock as unmanaged content, and a planned path there fails with fail_unmanaged; prefer roots side by side",
						p.ID, y.d.ID, y.root, x.d.ID, x.root, x.d.ID, y.d.ID))
				}
			}
		}
	}
}

func sameRoot(p *config.Pipeline, x, y *config.Destination, root, px, py string, planned map[destKey][]string, rep *report.Validate) {
	lead := fmt.Sprintf("pipeline %s: destinations %s and %s publish to the same root %s", p.ID, x.ID, y.ID, root)
	fix := "each run would take the outputs over from the other destination and rewrite them, and neither run could ever skip; give them different roots or disjoint paths.prefix"
	px2, py2 := planned[destKey{p.ID, x.ID}], planned[destKey{p.ID, y.ID}]
	if px2 != nil && py2 != nil {
		in := setOf(px2)
		both := slices.DeleteFunc(slices.Clone(py2), func(s string) bool { return !in[s] })
		if len(both) == 0 {
			return
		}
		slices.Sort(both)
		problem(rep, fmt.Sprintf("%s and both plan %d of the same output path(s) (%s): %s", lead, len(both), txn.Summarise(both, 3), fix))
		return
	}
	switch {
	case px == py:
		problem(rep, fmt.Sprintf("%s with the same paths.prefix %q, so they plan the same output paths: %s", lead, px, fix))
	case strings.HasPrefix(px, py), strings.HasPrefix(py, px):
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s, paths.prefix %q and %q: their output paths may overlap (validate --source DIR tells)", lead, px, py))
	}
}
