package render

import (
	_ "embed"
	"html/template"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
)

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
