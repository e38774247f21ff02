package render

import (
	_ "embed"
	"html/template"
	"time"
)

// PageData is what a page template (the built-in one or markdown.template)
// is executed with. The built-in page uses Title, Content, Source.ID and
// Index, never Source.Digest or Source.Created, which change on every
// reseal (docs/design.md, "A page's bytes depend on its content").
type PageData struct {
	// Title is the text of the first heading of the Markdown source, or the
	// source's file name without its extension when it has no heading.
	Title string
	// Content is the rendered Markdown, an HTML fragment.
	Content template.HTML
	// Source identifies the bundle the page comes from.
	Source PageSource
	// Path is the page's output path (prefix applied).
	Path string
	// Index is set on a destination's archive index page (the reports it
	// lists) and nil on a page rendered from Markdown.
	Index *PageIndex
}

// PageIndex describes the reports an archive index page lists.
type PageIndex struct {
	// Entries are the reports, newest first.
	Entries []IndexEntry
	// Newest and Oldest are the created times of the newest and oldest
	// report (zero without reports).
	Newest, Oldest time.Time
}

// PageSource identifies the source bundle of a page.
type PageSource struct {
	ID      string    // manifest id
	Digest  string    // manifest digest, "sha256:<hex>"
	Created time.Time // manifest created time
}

//go:embed page.html.tmpl
var builtinPageText string

// builtinPage is the built-in page template.
var builtinPage = template.Must(template.New("page.html.tmpl").Parse(builtinPageText))
