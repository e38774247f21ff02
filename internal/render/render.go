// Package render plans the outputs a destination publishes from a source
// bundle: copies of bundle files and Markdown rendered to HTML pages.
// The same bundle, destination and prefix always give byte-identical outputs.
package render

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/glob"
	"github.com/distributor-dev/distributor/internal/plan"
)

// ErrSourceMismatch: a Markdown source read from the bundle does not have
// its manifest entry's size or sha256 (the bundle changed after validation).
var ErrSourceMismatch = errors.New("file does not match its manifest entry")

// CollisionError reports two planned outputs with the same path (such as
// "a.md" rendered to "a.html" and a copied "a.html").
type CollisionError struct {
	Path string
	// SourcePaths: a generated output before a copy, else byte-wise.
	SourcePaths [2]string
	Kinds       [2]string
}

func (e *CollisionError) Error() string {
	return fmt.Sprintf("output path %q is produced twice: by %q (%s) and by %q (%s)",
		e.Path, e.SourcePaths[0], describeKind(e.Kinds[0]), e.SourcePaths[1], describeKind(e.Kinds[1]))
}

func describeKind(kind string) string {
	if kind == KindGenerated {
		return "rendered to HTML"
	}
	return "copied"
}

// markdownExt returns the Markdown extension p ends with (".md" or
// ".markdown", in any case), or "".
func markdownExt(p string) string {
	lower := strings.ToLower(p)
	for _, ext := range []string{".markdown", ".md"} {
		if strings.HasSuffix(lower, ext) {
			return p[len(p)-len(ext):]
		}
	}
	return ""
}

// htmlName replaces a trailing Markdown extension of p by ".html".
func htmlName(p string) string {
	if ext := markdownExt(p); ext != "" {
		return p[:len(p)-len(ext)] + ".html"
	}
	return p
}

// planned is an output under construction and its manifest entry.
type planned struct {
	out  Output
	file bundle.File
}

// Plan computes every output destination d publishes from bundle b, each
// path under prefix (the expanded paths.prefix): with publish.html a page
// per Markdown source, and copies as publish.source says, of the files
// publish.include/exclude select. Unknown rename keys, unclean paths and
// collisions (*CollisionError) are errors; see docs/design.md.
func Plan(ctx context.Context, b *bundle.Bundle, d *config.Destination, prefix string) (*Result, error) {
	if b == nil || d == nil {
		return nil, errors.New("render: nil bundle or destination")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Errors do not name the destination: callers report them under it.
	copyMD, copyAssets, err := sourceSelection(d.Publish.Source)
	if err != nil {
		return nil, err
	}

	if err := checkRenames(d.Paths, &b.Manifest); err != nil {
		return nil, err
	}

	selected, excluded, warnings := filterFiles(b.Manifest.Files, d.Publish)
	outs := plannedOutputs(selected, d, prefix, copyMD, copyAssets)
	for _, p := range outs {
		if err := cleanpath.CheckUnreserved(p.out.Path); err != nil {
			return nil, fmt.Errorf("destination %q: output for %q (prefix %q): invalid output path: %w",
				d.ID, p.out.SourcePath, prefix, err)
		}
	}
	if err := sortOutputs(outs); err != nil {
		return nil, fmt.Errorf("destination %q: %w", d.ID, err)
	}
	if d.Publish.HTML {
		broken, err := renderPages(ctx, b, d, outs, prefix)
		if err != nil {
			return nil, err
		}
		if len(broken) > 0 && d.Links.Missing == config.MissingFail {
			return nil, &BrokenLinksError{Links: broken}
		}
		for _, l := range broken {
			warnings = append(warnings, l.String())
		}
	}

	res := &Result{Outputs: make([]Output, 0, len(outs)), Excluded: excluded, Warnings: warnings}
	for _, p := range outs {
		p.out.URL = outputURL(d.Links, p.out.Path)
		res.Outputs = append(res.Outputs, p.out)
	}
	if i := primaryIndex(res.Outputs, prefix); i >= 0 {
		res.PrimaryPath, res.PrimaryURL = res.Outputs[i].Path, res.Outputs[i].URL
	}
	return res, nil
}

func plannedOutputs(selected []bundle.File, d *config.Destination, prefix string, copyMD, copyAssets bool) []planned {
	// At most two outputs per file (HTML and a copy); one for most.
	outs := make([]planned, 0, len(selected)+len(selected)/8)
	for _, f := range selected {
		target := f.Path
		if r, ok := d.Paths.Rename[f.Path]; ok {
			target = r
		}
		md := markdownExt(f.Path) != ""
		if md && d.Publish.HTML {
			outs = append(outs, planned{file: f, out: Output{
				Path:       prefix + htmlName(target),
				Kind:       KindGenerated,
				SourcePath: f.Path,
				Transform:  TransformMarkdown,
			}})
		}
		if (md && copyMD) || (!md && copyAssets) {
			outs = append(outs, planned{file: f, out: Output{
				Path:       prefix + target,
				Kind:       KindSource,
				SourcePath: f.Path,
				SHA256:     f.SHA256,
				Size:       f.Size,
			}})
		}
	}
	return outs
}

// sortOutputs sorts outs by path and fails with a *CollisionError for two at one path.
func sortOutputs(outs []planned) error {
	// Usually sorted already (the manifest is): then one pass checks it.
	byOutput := func(x, y planned) int {
		a, b := &x.out, &y.out
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Kind != b.Kind {
			if a.Kind == KindGenerated {
				return -1
			}
			return 1
		}
		return strings.Compare(a.SourcePath, b.SourcePath)
	}
	if !slices.IsSortedFunc(outs, byOutput) {
		slices.SortStableFunc(outs, byOutput)
	}
	for i := 1; i < len(outs); i++ {
		if a, b := outs[i-1].out, outs[i].out; a.Path == b.Path {
			return &CollisionError{
				Path:        a.Path,
				SourcePaths: [2]string{a.SourcePath, b.SourcePath},
				Kinds:       [2]string{a.Kind, b.Kind},
			}
		}
	}
	return nil
}

// renderPages renders outs' generated outputs and returns their broken links, by source and line.
func renderPages(ctx context.Context, b *bundle.Bundle, d *config.Destination, outs []planned, prefix string) ([]BrokenLink, error) {
	htmlOut := make(map[string]string) // Markdown source path -> its HTML output path
	for _, p := range outs {
		if p.out.Kind == KindGenerated {
			htmlOut[p.out.SourcePath] = p.out.Path
		}
	}
	r, err := newRenderer(d, htmlOut, newLinkTargets(d, outs, prefix, &b.Manifest), &b.Manifest)
	if err != nil {
		return nil, fmt.Errorf("destination %q: %w", d.ID, err)
	}
	var broken []BrokenLink
	for i := range outs {
		o := &outs[i].out
		if o.Kind != KindGenerated {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		content, bl, err := r.renderFile(b.Dir, outs[i].file, o.Path)
		if err != nil {
			return nil, fmt.Errorf("destination %q: %w", d.ID, err)
		}
		o.Content = content
		o.SHA256 = sha256Digest(content)
		o.Size = int64(len(content))
		broken = append(broken, bl...)
	}
	// Pages come by output path; a reader fixes them by source.
	slices.SortStableFunc(broken, func(x, y BrokenLink) int { return strings.Compare(x.Source, y.Source) })
	return broken, nil
}

// filterFiles applies publish.include/exclude to files: it returns those
// selected, the paths filtered out (sorted) and a warning for each pattern
// that matches no file (almost always a typo or a stale rule).
func filterFiles(files []bundle.File, pub config.Publish) (selected []bundle.File, excluded, warnings []string) {
	if pub.Include == nil && len(pub.Exclude) == 0 {
		return files, nil, nil
	}
	used := map[string]bool{}
	match := func(patterns []string, p string) bool {
		hit := false
		for _, pat := range patterns {
			if glob.Match(pat, p) {
				used[pat] = true
				hit = true
			}
		}
		return hit
	}
	for _, f := range files {
		in := pub.Include == nil || match(pub.Include, f.Path)
		out := match(pub.Exclude, f.Path)
		if in && !out {
			selected = append(selected, f)
		} else {
			excluded = append(excluded, f.Path)
		}
	}
	sort.Strings(excluded)
	unused := func(name string, patterns []string) {
		for _, pat := range patterns {
			if !used[pat] {
				warnings = append(warnings, fmt.Sprintf("%s pattern %q matches no file of the bundle", name, pat))
			}
		}
	}
	unused("publish.include", pub.Include)
	unused("publish.exclude", pub.Exclude)
	return selected, excluded, warnings
}

// sourceSelection: whether publish.source copies Markdown and other files.
func sourceSelection(source string) (copyMD, copyAssets bool, err error) {
	switch source {
	case config.SourceAll:
		return true, true, nil
	case config.SourceAssets, "":
		return false, true, nil
	case config.SourceNone:
		return false, false, nil
	}
	return false, false, fmt.Errorf("publish.source %q: want %q, %q or %q",
		source, config.SourceAll, config.SourceAssets, config.SourceNone)
}

// checkRenames reports the first paths.rename entry with an unknown key or unclean target.
func checkRenames(p config.Paths, m *bundle.Manifest) error {
	for _, k := range slices.Sorted(maps.Keys(p.Rename)) {
		at := "paths.rename"
		if line := p.RenameLines[k]; line > 0 {
			at = fmt.Sprintf("paths.rename (config line %d)", line)
		}
		if _, ok := m.Lookup(k); !ok {
			return fmt.Errorf("%s: %q is not a file of the bundle; %s", at, k, bundleFileHint(k, m.Files))
		}
		if err := cleanpath.CheckUnreserved(p.Rename[k]); err != nil {
			return fmt.Errorf("%s: target of %q: %w", at, k, err)
		}
	}
	return nil
}

// bundleFileHint suggests the bundle file closest to name, or lists a few.
func bundleFileHint(name string, files []bundle.File) string {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	if c := config.Closest(name, paths); c != "" {
		return fmt.Sprintf("did you mean %q?", c)
	}
	const shown = 5
	if len(paths) > shown {
		return fmt.Sprintf("the bundle's files include %s and %d more (bundle verify lists them)", strings.Join(paths[:shown], ", "), len(paths)-shown)
	}
	return "the bundle's files are " + strings.Join(paths, ", ")
}

// outputURL is the public URL of output path p, or "" without a base URL.
func outputURL(links config.Links, p string) string {
	if links.BaseURL == "" {
		return ""
	}
	if links.Pretty {
		switch {
		case p == "index.html":
			p = ""
		case strings.HasSuffix(p, "/index.html"):
			p = strings.TrimSuffix(p, "index.html")
		}
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return links.BaseURL + strings.Join(segs, "/")
}

// primaryIndex is the index in outs of the primary output (-1: none): the
// generated prefix+"index.html", else the first generated output, else the first.
func primaryIndex(outs []Output, prefix string) int {
	generated := func(o Output) bool { return o.Kind == KindGenerated }
	if i := slices.IndexFunc(outs, func(o Output) bool { return generated(o) && o.Path == prefix+"index.html" }); i >= 0 {
		return i
	}
	return min(max(slices.IndexFunc(outs, generated), 0), len(outs)-1)
}

// loadTemplate parses the custom page template file ("": the built-in one).
func loadTemplate(file string) (*template.Template, error) {
	if file == "" {
		return builtinPage, nil
	}
	t, err := template.ParseFiles(file)
	if err != nil {
		return nil, fmt.Errorf("markdown.template %s: %w", file, err)
	}
	return t, nil
}

// CheckTemplate parses a markdown.template file, to find errors without a bundle.
func CheckTemplate(file string) error {
	_, err := loadTemplate(file)
	return err
}

// Output kinds and transforms, as recorded in the catalog.
const (
	KindSource        = "source"
	KindGenerated     = "generated"
	TransformMarkdown = "markdown_to_html"
)

// Output is one planned output of a destination (plan.Output: render
// plans what the planner decides on).
type Output = plan.Output

// Result is everything a destination publishes from one bundle.
type Result struct {
	// Outputs sorted by Path, byte-wise.
	Outputs []Output
	// PrimaryURL and PrimaryPath name the page a human should open first;
	// it is written last (docs/design.md, "Write order").
	PrimaryURL  string
	PrimaryPath string
	// Excluded lists, sorted, the bundle paths publish.include/exclude
	// filtered out.
	Excluded []string
	// Warnings do not stop publishing.
	Warnings []string
}

// PageData is what a page template (the built-in one or markdown.template)
// is executed with. The built-in page uses Title, Content, Source.ID and
// Index, never Source.Digest or Source.Created, which change on every
// reseal (docs/design.md, "A page's bytes depend on its content").
type PageData struct {
	// Title is the first heading's text, else the file name without extension.
	Title   string
	Content template.HTML
	Source  PageSource
	Path    string
	// Index is set on an archive index page, nil on a Markdown page.
	Index *PageIndex
}

// PageIndex describes the reports an archive index page lists.
type PageIndex struct {
	Entries        []IndexEntry // newest first
	Newest, Oldest time.Time    // zero without reports
}

// PageSource identifies the source bundle of a page: its manifest's id,
// digest ("sha256:<hex>") and created time, as the catalog records them.
type PageSource = catalog.Source

//go:embed page.html.tmpl
var builtinPageText string

var builtinPage = template.Must(template.New("page.html.tmpl").Parse(builtinPageText))
