package render

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// docKey holds the parsed document's *docInfo in its parser.Context.
var docKey = parser.NewContextKey()

// docInfo locates the document being rendered.
type docInfo struct {
	sourcePath string // bundle path of the Markdown source
	outputPath string // its HTML output path
	// Set by the transformer: the first heading's text and broken links.
	title  string
	broken []BrokenLink
}

// mdRenderer renders the Markdown sources of one Plan call.
type mdRenderer struct {
	md       goldmark.Markdown
	page     *template.Template
	tmplName string // template file for messages, "" for the built-in page
	source   PageSource
}

// newRenderer builds the converter and page template for one Plan call;
// htmlOut maps rendered Markdown source paths to their output paths.
func newRenderer(d *config.Destination, htmlOut map[string]string, targets *linkTargets, m *bundle.Manifest) (*mdRenderer, error) {
	page, err := loadTemplate(d.Markdown.Template)
	if err != nil {
		return nil, err
	}
	var ropts []renderer.Option
	if d.Markdown.RawHTML {
		ropts = append(ropts, html.WithUnsafe())
	} else {
		ropts = append(ropts, renderer.WithNodeRenderers(util.Prioritized(escapedHTMLRenderer{}, 100)))
	}
	return &mdRenderer{
		md: goldmark.New(
			goldmark.WithExtensions(extension.GFM, extension.Footnote),
			goldmark.WithParserOptions(
				parser.WithASTTransformers(util.Prioritized(
					&docTransformer{htmlOut: htmlOut, targets: targets, rawHTMLShown: !d.Markdown.RawHTML}, 1000)),
			),
			goldmark.WithRendererOptions(ropts...),
		),
		page:     page,
		tmplName: d.Markdown.Template,
		source:   PageSource{ID: m.ID, Digest: m.Digest, Created: m.Created},
	}, nil
}

// renderFile reads and verifies f from dir and renders out's page, with its broken links.
func (r *mdRenderer) renderFile(dir string, f bundle.File, out string) ([]byte, []BrokenLink, error) {
	src, err := readVerified(dir, f)
	if err != nil {
		return nil, nil, err
	}
	body, info, err := r.convert(src, f.Path, out)
	if err != nil {
		return nil, nil, fmt.Errorf("render %q: %w", f.Path, err)
	}
	title := cmp.Or(info.title, strings.TrimSuffix(path.Base(f.Path), markdownExt(f.Path)))
	var buf bytes.Buffer
	if err := r.page.Execute(&buf, PageData{Title: title, Content: template.HTML(body), Source: r.source, Path: out}); err != nil {
		if r.tmplName != "" {
			return nil, nil, fmt.Errorf("render %q: markdown.template %s: %w", f.Path, r.tmplName, err)
		}
		return nil, nil, fmt.Errorf("render %q: built-in page template: %w", f.Path, err)
	}
	return buf.Bytes(), info.broken, nil
}

// convert renders Markdown src to an HTML fragment, with what the transformer found.
func (r *mdRenderer) convert(src []byte, sourcePath, out string) ([]byte, *docInfo, error) {
	info := &docInfo{sourcePath: sourcePath, outputPath: out}
	pc := parser.NewContext()
	pc.Set(docKey, info)
	doc := r.md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
	var buf bytes.Buffer
	if err := r.md.Renderer().Render(&buf, src, doc); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), info, nil
}

// readVerified reads bundle file f from dir, checking its size and sha256.
func readVerified(dir string, f bundle.File) ([]byte, error) {
	fh, err := os.Open(filepath.Join(dir, filepath.FromSlash(f.Path)))
	if err != nil {
		return nil, fmt.Errorf("read markdown source %q: %w", f.Path, err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, f.Size+1))
	if err != nil {
		return nil, fmt.Errorf("read markdown source %q: %w", f.Path, err)
	}
	if int64(len(data)) != f.Size {
		return nil, fmt.Errorf("markdown source %q: size %d, manifest lists %d: %w",
			f.Path, len(data), f.Size, ErrSourceMismatch)
	}
	if got := sha256Digest(data); got != f.SHA256 {
		return nil, fmt.Errorf("markdown source %q: sha256 %s, manifest lists %s: %w",
			f.Path, got, f.SHA256, ErrSourceMismatch)
	}
	return data, nil
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return bundle.FormatSHA256(sum[:])
}

// plainText is the visible text of an inline container, whitespace
// collapsed. Raw HTML counts as text when it is escaped (shown literally).
func plainText(n ast.Node, src []byte, rawHTMLShown bool) string {
	var sb strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			sb.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				sb.WriteByte(' ')
			}
		case *ast.String:
			sb.Write(c.Value)
		case *ast.AutoLink:
			sb.Write(c.Label(src))
		case *ast.RawHTML:
			if rawHTMLShown {
				sb.Write(c.Segments.Value(src))
			}
			return ast.WalkSkipChildren, nil
		case *east.FootnoteLink:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return strings.Join(strings.Fields(sb.String()), " ")
}

// headingID turns heading text into an id the way GitHub does: lower case, letters, marks,
// digits, '-' and '_' kept, spaces turned into '-', anything else dropped.
func headingID(text string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r), unicode.IsMark(r), unicode.IsDigit(r), r == '-', r == '_':
			sb.WriteRune(r)
		case r == ' ':
			sb.WriteByte('-')
		}
	}
	return sb.String()
}

// docTransformer gives headings unique ids, records the title, rewrites relative links to
// Markdown files to their HTML outputs, and records those that point at nothing published.
type docTransformer struct {
	htmlOut      map[string]string // Markdown source path -> HTML output path
	targets      *linkTargets      // what the other links may point at
	rawHTMLShown bool              // raw HTML is escaped, so it shows as text
}

func (t *docTransformer) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	info, ok := pc.Get(docKey).(*docInfo)
	if !ok {
		return
	}
	src := reader.Source()
	used := map[string]bool{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			text := plainText(n, src, t.rawHTMLShown)
			if info.title == "" {
				info.title = text
			}
			base := cmp.Or(headingID(text), "heading")
			id := base
			for i := 1; used[id]; i++ {
				id = base + "-" + strconv.Itoa(i)
			}
			used[id] = true
			n.SetAttributeString("id", []byte(id))
		case *ast.Link:
			t.link(n, &n.Destination, false, info, src)
		case *ast.Image:
			t.link(n, &n.Destination, true, info, src)
		}
		return ast.WalkContinue, nil
	})
}

// link rewrites a relative link n to a bundle Markdown file to its HTML output, or records it as broken.
func (t *docTransformer) link(n ast.Node, dest *[]byte, image bool, info *docInfo, src []byte) {
	// Resolve backslash escapes and entities as the HTML renderer would.
	d := string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(*dest))))
	if d == "" || d[0] == '/' || d[0] == '#' || d[0] == '?' || hasScheme(d) {
		return
	}
	p, tail := d, ""
	if i := strings.IndexAny(d, "?#"); i >= 0 {
		p, tail = d[:i], d[i:]
	}
	dir := p == "" || strings.HasSuffix(p, "/")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	if out, ok := t.htmlOut[path.Join(path.Dir(info.sourcePath), p)]; ok && !dir {
		href := relativeHref(path.Dir(info.outputPath), out, false)
		if first, _, _ := strings.Cut(href, "/"); strings.Contains(first, ":") {
			href = "./" + href // so that it cannot read as a scheme
		}
		*dest = []byte(href + tail)
		return
	}
	if t.targets == nil {
		return
	}
	if why := t.targets.check(info, p); why != "" {
		info.broken = append(info.broken, BrokenLink{Source: info.sourcePath, Line: lineOf(n, src), Image: image, Target: d, Reason: why})
	}
}

// hasScheme reports whether the URL reference d starts with a scheme
// ("https:", "mailto:", ...): a colon before any '/', '?' or '#'.
func hasScheme(d string) bool {
	i := strings.IndexAny(d, ":/?#")
	return i > 0 && d[i] == ':'
}

// escapeSegment percent-escapes s but RFC 3986 unreserved and safe sub-delims.
func escapeSegment(s string) string {
	const safe = "-._~!$'()*+,;=:@"
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(safe, c) >= 0 {
			sb.WriteByte(c)
			continue
		}
		fmt.Fprintf(&sb, "%%%02X", c)
	}
	return sb.String()
}

// escapedHTMLRenderer renders raw HTML as escaped text, shown literally.
type escapedHTMLRenderer struct{}

func (escapedHTMLRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderEscapedRawHTML)
	reg.Register(ast.KindHTMLBlock, renderEscapedHTMLBlock)
}

func renderEscapedRawHTML(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.Write(util.EscapeHTML(node.(*ast.RawHTML).Segments.Value(src)))
	return ast.WalkSkipChildren, nil
}

func renderEscapedHTMLBlock(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	raw := n.Lines().Value(src)
	if n.HasClosure() {
		raw = append(raw, n.ClosureLine.Value(src)...)
	}
	raw = bytes.TrimRight(raw, "\r\n")
	_, _ = w.WriteString("<p>")
	_, _ = w.Write(util.EscapeHTML(raw))
	_, _ = w.WriteString("</p>\n")
	return ast.WalkContinue, nil
}

// BrokenLink is a relative link or image of a rendered Markdown page whose
// target is nothing the destination publishes.
type BrokenLink struct {
	Source string // the Markdown file's bundle path
	Line   int    // 1-based line of the link's "[" or the image's "!", 0 if unknown
	Image  bool
	Target string // the link's destination as written (entities resolved)
	Reason string // what is missing
}

// String is the warning: "report.md:3: link to "x.md": no file x.md in the bundle".
func (l BrokenLink) String() string {
	at := l.Source
	if l.Line > 0 {
		at = fmt.Sprintf("%s:%d", l.Source, l.Line)
	}
	what := "link to"
	if l.Image {
		what = "image"
	}
	return fmt.Sprintf("%s: %s %q: %s", at, what, l.Target, l.Reason)
}

// BrokenLinksError is Plan's error for broken links with links.missing: fail.
type BrokenLinksError struct {
	Links []BrokenLink // by source path, then line
}

// brokenShown is how many broken links an error names.
const brokenShown = 10

func (e *BrokenLinksError) Error() string {
	parts := make([]string, 0, min(len(e.Links), brokenShown)+1)
	for _, l := range e.Links[:min(len(e.Links), brokenShown)] {
		parts = append(parts, l.String())
	}
	if n := len(e.Links) - brokenShown; n > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", n))
	}
	noun := "links"
	if len(e.Links) == 1 {
		noun = "link"
	}
	return fmt.Sprintf("%d broken %s (links.missing is fail: fix them, or set links.missing: warn to publish anyway): %s",
		len(e.Links), noun, strings.Join(parts, "; "))
}

// linkTargets is what a relative link may point at: outputs, index page, feed, their directories.
type linkTargets struct {
	paths    map[string]bool
	prefix   string // paths.prefix: a link leaving it is not checked
	manifest *bundle.Manifest
}

func newLinkTargets(d *config.Destination, outs []planned, prefix string, m *bundle.Manifest) *linkTargets {
	t := &linkTargets{paths: make(map[string]bool, len(outs)+len(outs)/4+1), prefix: prefix, manifest: m}
	add := func(p string) {
		t.paths[p] = true
		for dir := path.Dir(p); !t.paths[dir]; dir = path.Dir(dir) {
			t.paths[dir] = true // "." (the root) ends the walk
		}
	}
	for _, p := range outs {
		add(p.out.Path)
	}
	if d.Index != nil {
		add(d.Index.Path)
		if d.Index.Feed != "" {
			add(d.Index.Feed)
		}
	}
	return t
}

// check returns why the relative reference p of the page info is broken, or "" when it points at
// something published or outside the publication (above the root, or out of the paths.prefix folder: unknown here).
func (t *linkTargets) check(info *docInfo, p string) string {
	out := path.Join(path.Dir(info.outputPath), p)
	if t.paths[out] || out == ".." || strings.HasPrefix(out, "../") || !strings.HasPrefix(out, t.prefix) {
		return ""
	}
	in := path.Join(path.Dir(info.sourcePath), p)
	if in == ".." || strings.HasPrefix(in, "../") {
		return "nothing is published at " + out
	}
	if _, ok := t.manifest.Lookup(in); ok && out == t.prefix+in {
		return fmt.Sprintf("this destination does not publish the bundle's %s", in)
	} else if ok {
		return fmt.Sprintf("the bundle has %s, but this destination publishes nothing at %s", in, out)
	}
	return fmt.Sprintf("no file %s in the bundle", in)
}

// lineOf is the 1-based line of n (or its nearest positioned ancestor), or 0.
func lineOf(n ast.Node, src []byte) int {
	for ; n != nil; n = n.Parent() {
		if pos := n.Pos(); pos >= 0 && pos <= len(src) {
			return bytes.Count(src[:pos], []byte{'\n'}) + 1
		}
	}
	return 0
}
