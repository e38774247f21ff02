package render

// Output kinds and transforms, as recorded in the catalog.
const (
	KindSource        = "source"
	KindGenerated     = "generated"
	TransformMarkdown = "markdown_to_html"
)

// Output is one planned output of a destination.
type Output struct {
	// Path is the output path relative to the destination root (clean,
	// prefix applied).
	Path string
	// Kind is KindSource (a copied bundle file) or KindGenerated.
	Kind string
	// SourcePath is the bundle path the output comes from.
	SourcePath string
	// Transform is TransformMarkdown for generated outputs, "" otherwise.
	Transform string
	// SHA256 is "sha256:<64 lowercase hex>" of the output bytes.
	SHA256 string
	// Size is the output size in bytes.
	Size int64
	// URL is the public URL, or "" when the destination has no links.base_url.
	URL string
	// Content holds the bytes of a generated output. It is nil for source
	// copies, whose bytes are streamed from the bundle file SourcePath.
	Content []byte
}

// Result is everything a destination publishes from one bundle.
type Result struct {
	// Outputs sorted by Path, byte-wise.
	Outputs []Output
	// PrimaryURL is the URL a human should open first, or "".
	PrimaryURL string
	// PrimaryPath is the output path of the page a human should open
	// first (the output PrimaryURL names), or "" without outputs. It is
	// written last (see docs/design.md, "Write order").
	PrimaryPath string
	// Excluded lists, sorted, the bundle paths that publish.include and
	// publish.exclude filtered out.
	Excluded []string
	// Warnings are problems that do not stop publishing (a filter pattern
	// that matches no bundle file).
	Warnings []string
}
