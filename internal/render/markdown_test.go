package render

import (
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/config"
)

// fragment renders Markdown src as the body of bundle file "doc.md" (output
// "doc.html") and returns the HTML fragment.
func fragment(t *testing.T, src string, rawHTML bool) string {
	t.Helper()
	d := dest()
	d.Markdown.RawHTML = rawHTML
	r, err := newRenderer(d, map[string]string{"doc.md": "doc.html"}, nil, &bundle.Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	body, _, err := r.convert([]byte(src), "doc.md", "doc.html")
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

var hrefRE = regexp.MustCompile(`(?:href|src)="([^"]*)"`)

func TestLinkRewriting(t *testing.T) {
	others := []string{"a.md", "b.md", "sub/c.md", "sub/deep/d.md", "img.png", "notes.txt", "x y.md", "E.MD", "sub/index.md"}
	tests := []struct {
		name   string
		from   string // linking file
		link   string // Markdown holding one link or image
		prefix string
		rename map[string]string
		want   string // its href/src in the rendered page
	}{
		{"same dir", "a.md", "[l](b.md)", "", nil, "b.html"},
		{"dot slash", "a.md", "[l](./b.md)", "", nil, "b.html"},
		{"fragment", "a.md", "[l](b.md#sec-2)", "", nil, "b.html#sec-2"},
		{"query and fragment", "a.md", "[l](b.md?v=1#s)", "", nil, "b.html?v=1#s"},
		{"self with fragment", "a.md", "[l](a.md#top)", "", nil, "a.html#top"},
		{"subdir", "a.md", "[l](sub/c.md)", "", nil, "sub/c.html"},
		{"subdir index", "a.md", "[l](sub/index.md)", "", nil, "sub/index.html"},
		{"parent dir", "sub/c.md", "[l](../a.md)", "", nil, "../a.html"},
		{"sibling dir via parent", "sub/deep/d.md", "[l](../c.md#x)", "", nil, "../c.html#x"},
		{"two levels up", "sub/deep/d.md", "[l](../../b.md)", "", nil, "../../b.html"},
		{"with prefix", "sub/c.md", "[l](../a.md)", "tomorrow/2026/", nil, "../a.html"},
		{"with prefix, root", "a.md", "[l](sub/c.md)", "tomorrow/", nil, "sub/c.html"},
		{"renamed target", "sub/c.md", "[l](../a.md)", "t/", map[string]string{"a.md": "index.md"}, "../index.html"},
		{"renamed linking file", "sub/c.md", "[l](../a.md)", "", map[string]string{"sub/c.md": "c2.md"}, "a.html"},
		{"renamed into other dir", "a.md", "[l](b.md)", "", map[string]string{"b.md": "x/y/b.md"}, "x/y/b.html"},
		{"percent-escaped name", "a.md", "[l](x%20y.md#f)", "", nil, "x%20y.html#f"},
		{"angle-bracket name", "a.md", "[l](<x y.md>)", "", nil, "x%20y.html"},
		{"upper-case extension", "a.md", "[l](E.MD)", "", nil, "E.html"},
		{"image", "a.md", "![i](b.md)", "", nil, "b.html"},
		{"reference link", "a.md", "[l][r]\n\n[r]: sub/c.md \"title\"", "", nil, "sub/c.html"},
		{"non-markdown untouched", "sub/c.md", "[l](../img.png)", "", nil, "../img.png"},
		{"non-markdown image untouched", "a.md", "![i](img.png)", "", nil, "img.png"},
		{"markdown not in bundle untouched", "a.md", "[l](missing.md)", "", nil, "missing.md"},
		{"outside bundle untouched", "a.md", "[l](../a.md)", "", nil, "../a.md"},
		{"absolute URL untouched", "a.md", "[l](https://example.com/b.md)", "", nil, "https://example.com/b.md"},
		{"scheme-relative untouched", "a.md", "[l](//example.com/b.md)", "", nil, "//example.com/b.md"},
		{"root-relative untouched", "a.md", "[l](/b.md)", "", nil, "/b.md"},
		{"mailto untouched", "a.md", "[l](mailto:b.md)", "", nil, "mailto:b.md"},
		{"fragment only untouched", "a.md", "[l](#b.md)", "", nil, "#b.md"},
		{"directory untouched", "a.md", "[l](sub/)", "", nil, "sub/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for _, f := range others {
				files[f] = "# " + f + "\n"
			}
			files[tt.from] = tt.link + "\n"
			d := dest()
			d.Markdown.Template = writeFile(t, "t.tmpl", "{{.Content}}")
			d.Paths.Rename = tt.rename
			res := planFor(t, files, d, tt.prefix)
			var page string
			for _, o := range res.Outputs {
				if o.SourcePath == tt.from && o.Kind == KindGenerated {
					page = string(o.Content)
				}
			}
			m := hrefRE.FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("no link in %q", page)
			}
			if m[1] != tt.want {
				t.Errorf("link = %q, want %q (page %q)", m[1], tt.want, page)
			}
		})
	}
}

func TestRelPath(t *testing.T) {
	tests := []struct{ from, to, want string }{
		{"a.html", "b.html", "b.html"},
		{"a.html", "a.html", "a.html"},
		{"x/a.html", "x/b.html", "b.html"},
		{"x/a.html", "b.html", "../b.html"},
		{"a.html", "x/y/b.html", "x/y/b.html"},
		{"x/y/a.html", "x/z/b.html", "../z/b.html"},
		{"x/y/a.html", "x/y.html", "../y.html"},
		{"p/x/a.html", "q/x/a.html", "../../q/x/a.html"},
	}
	for _, tt := range tests {
		if got := relativeHref(path.Dir(tt.from), tt.to, false); got != tt.want {
			t.Errorf("relativeHref(%q, %q) = %q, want %q", path.Dir(tt.from), tt.to, got, tt.want)
		}
	}
	// A rewritten link is escaped, and "./" keeps a first segment with ':' from reading as a scheme.
	r, err := newRenderer(dest(), map[string]string{"a:b/c d#?.md": "a:b/c d#?.html"}, nil, &bundle.Manifest{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	body, _, err := r.convert([]byte("[l](./a:b/c%20d%23%3F.md)"), "doc.md", "doc.html")
	if err != nil {
		t.Fatal(err)
	}
	if m := hrefRE.FindStringSubmatch(string(body)); m == nil || m[1] != "./a:b/c%20d%23%3F.html" {
		t.Errorf("rewritten link in %q, want href ./a:b/c%%20d%%23%%3F.html", body)
	}
}

func TestRawHTML(t *testing.T) {
	src := "Some <b class=\"x\">bold</b> text.\n\n<div>\n<script>alert(1)</script>\n</div>\n\n<!-- note -->\n"
	t.Run("escaped by default", func(t *testing.T) {
		want := "<p>Some &lt;b class=&quot;x&quot;&gt;bold&lt;/b&gt; text.</p>\n" +
			"<p>&lt;div&gt;\n&lt;script&gt;alert(1)&lt;/script&gt;\n&lt;/div&gt;</p>\n" +
			"<p>&lt;!-- note --&gt;</p>\n"
		if diff := cmp.Diff(want, fragment(t, src, false)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("passed with raw_html", func(t *testing.T) {
		want := "<p>Some <b class=\"x\">bold</b> text.</p>\n" +
			"<div>\n<script>alert(1)</script>\n</div>\n" +
			"<!-- note -->\n"
		if diff := cmp.Diff(want, fragment(t, src, true)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("closure lines", func(t *testing.T) {
		got := fragment(t, "<pre>\nx < y\n</pre>\n", false)
		if want := "<p>&lt;pre&gt;\nx &lt; y\n&lt;/pre&gt;</p>\n"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("dangerous URL dropped by default", func(t *testing.T) {
		if got := fragment(t, "[x](javascript:alert(1))", false); strings.Contains(got, "javascript") {
			t.Errorf("got %q", got)
		}
	})
}

func TestMarkdownFeatures(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"table", "| a | b |\n|---|--:|\n| 1 | 2 |\n",
			"<table>\n<thead>\n<tr>\n<th>a</th>\n<th style=\"text-align:right\">b</th>\n</tr>\n</thead>\n" +
				"<tbody>\n<tr>\n<td>1</td>\n<td style=\"text-align:right\">2</td>\n</tr>\n</tbody>\n</table>\n"},
		{"strikethrough", "~~gone~~\n", "<p><del>gone</del></p>\n"},
		{"task list", "- [x] done\n- [ ] todo\n",
			"<ul>\n<li><input checked=\"\" disabled=\"\" type=\"checkbox\"> done</li>\n" +
				"<li><input disabled=\"\" type=\"checkbox\"> todo</li>\n</ul>\n"},
		{"autolink url", "see https://example.com/x now\n",
			"<p>see <a href=\"https://example.com/x\">https://example.com/x</a> now</p>\n"},
		{"autolink www", "www.example.com\n", "<p><a href=\"http://www.example.com\">www.example.com</a></p>\n"},
		{"footnote", "Hi[^1].\n\n[^1]: Note.\n",
			"<p>Hi<sup id=\"fnref:1\"><a href=\"#fn:1\" class=\"footnote-ref\" role=\"doc-noteref\">1</a></sup>.</p>\n" +
				"<div class=\"footnotes\" role=\"doc-endnotes\">\n<hr>\n<ol>\n<li id=\"fn:1\">\n" +
				"<p>Note.&#160;<a href=\"#fnref:1\" class=\"footnote-backref\" role=\"doc-backlink\">&#x21a9;&#xfe0e;</a></p>\n" +
				"</li>\n</ol>\n</div>\n"},
		{"heading ids", "# Hello, World!\n\n## Hello, World!\n\n### Über uns\n",
			"<h1 id=\"hello-world\">Hello, World!</h1>\n<h2 id=\"hello-world-1\">Hello, World!</h2>\n" +
				"<h3 id=\"über-uns\">Über uns</h3>\n"},
		{"heading ids from rendered text", "## See [the *docs*](x.md) and `f()`\n\n#\n\n## 2. Snake_case -- ok?\n",
			"<h2 id=\"see-the-docs-and-f\">See <a href=\"x.md\">the <em>docs</em></a> and <code>f()</code></h2>\n" +
				"<h1 id=\"heading\"></h1>\n<h2 id=\"2-snake_case----ok\">2. Snake_case -- ok?</h2>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fragment(t, tt.src, false)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCommonMarkSanity checks a handful of CommonMark 0.31 spec examples.
func TestCommonMarkSanity(t *testing.T) {
	tests := []struct {
		example   int
		src, want string
	}{
		{1, "\tfoo\tbaz\t\tbim\n", "<pre><code>foo\tbaz\t\tbim\n</code></pre>\n"},
		{12, "\\!\\\"\\#\\$\\%\\&\\'\\(\\)\\*\\+\\,\\-\\.\\/\\:\\;\\<\\=\\>\\?\\@\\[\\\\\\]\\^\\_\\`\\{\\|\\}\\~\n",
			"<p>!&quot;#$%&amp;'()*+,-./:;&lt;=&gt;?@[\\]^_`{|}~</p>\n"},
		{43, "***\n---\n___\n", "<hr>\n<hr>\n<hr>\n"},
		{62, "# foo\n## foo\n### foo\n#### foo\n##### foo\n###### foo\n",
			"<h1 id=\"foo\">foo</h1>\n<h2 id=\"foo-1\">foo</h2>\n<h3 id=\"foo-2\">foo</h3>\n" +
				"<h4 id=\"foo-3\">foo</h4>\n<h5 id=\"foo-4\">foo</h5>\n<h6 id=\"foo-5\">foo</h6>\n"},
		{119, "```\n<\n >\n```\n", "<pre><code>&lt;\n &gt;\n</code></pre>\n"},
		{142, "```ruby\ndef foo(x)\n  return 3\nend\n```\n",
			"<pre><code class=\"language-ruby\">def foo(x)\n  return 3\nend\n</code></pre>\n"},
		{228, "> # Foo\n> bar\n> baz\n", "<blockquote>\n<h1 id=\"foo\">Foo</h1>\n<p>bar\nbaz</p>\n</blockquote>\n"},
		{301, "- foo\n- bar\n+ baz\n", "<ul>\n<li>foo</li>\n<li>bar</li>\n</ul>\n<ul>\n<li>baz</li>\n</ul>\n"},
		{350, "*foo bar*\n", "<p><em>foo bar</em></p>\n"},
		{482, "[link](/uri \"title\")\n", "<p><a href=\"/uri\" title=\"title\">link</a></p>\n"},
		{633, "foo  \nbaz\n", "<p>foo<br>\nbaz</p>\n"},
	}
	for _, tt := range tests {
		if got := fragment(t, tt.src, false); got != tt.want {
			t.Errorf("example %d: got %q, want %q", tt.example, got, tt.want)
		}
	}
}

func TestPublishHTMLOffDoesNotReadMarkdown(t *testing.T) {
	b := newBundle(t, map[string]string{"a.md": "# A\n"})
	b.Manifest.Files[0].SHA256 = digestOf("something else") // would fail if read
	d := dest()
	d.Publish = config.Publish{HTML: false, Source: config.SourceAll}
	d.Markdown.Template = "/nonexistent/template.tmpl" // not parsed without rendering
	res := plan2(t, b, d)
	if len(res.Outputs) != 1 || res.Outputs[0].Kind != KindSource {
		t.Fatalf("outputs = %v", briefs(res))
	}
}
