package render

import (
	_ "embed"
	"html/template"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// Output kinds and transforms, as recorded in the catalog.
const (
	KindSource        = "source"
	KindGenerated     = "generated"
	TransformMarkdown = "markdown_to_html"
)

// Output is one planned output of a destination.
type Output struct {
	// Path is relative to the destination root (clean, prefix applied).
	Path       string
	Kind       string // KindSource (a copied bundle file) or KindGenerated
	SourcePath string
	Transform  string
	SHA256     string // "sha256:<64 lowercase hex>"
	Size       int64
	// URL is the public URL, or "" without links.base_url.
	URL string
	// Content holds a generated output's bytes (nil for copies, streamed
	// from the bundle file SourcePath).
	Content []byte
	// Encoding names the compression (compress.Encoding) of the output
	// Plain that this output's bytes are: a sidecar, or an object stored
	// compressed (spec 3.4). SHA256 and Size are the compressed bytes'.
	Encoding string
	Plain    *Output
}

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
