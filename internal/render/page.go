package render

import (
	_ "embed"
	"html/template"
	"time"
)

// PageData is what a page template (the built-in one or markdown.template)
// is executed with.
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
