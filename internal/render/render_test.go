package render

import (
	"context"
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/config"
)

// brief is the layout-relevant part of an Output.
type brief struct {
	Path, Kind, SourcePath, Transform string
}

func briefs(res *Result) []brief {
	out := []brief{}
	for _, o := range res.Outputs {
		out = append(out, brief{o.Path, o.Kind, o.SourcePath, o.Transform})
	}
	return out
}

func planFor(t *testing.T, files map[string]string, d *config.Destination, prefix string) *Result {
	t.Helper()
	res, err := Plan(context.Background(), newBundle(t, files), d, prefix)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	return res
}

func output(t *testing.T, res *Result, path string) Output {
	t.Helper()
	for _, o := range res.Outputs {
		if o.Path == path {
			return o
		}
	}
	t.Fatalf("no output %q in %v", path, briefs(res))
	return Output{}
}

func gen(path, src string) brief { return brief{path, KindGenerated, src, TransformMarkdown} }
func cp(path, src string) brief  { return brief{path, KindSource, src, ""} }

func TestPlanSelection(t *testing.T) {
	files := map[string]string{
		"a.md":            "# A\n",
		"B.MD":            "# B\n",
		"sub/c.markdown":  "# C\n",
		"sub/img.png":     "png",
		"notes.txt":       "txt",
		"md.txt":          "not markdown",
		"sub/x.md.backup": "not markdown either",
	}
	tests := []struct {
		html   bool
		source string
		want   []brief
	}{
		{true, config.SourceAll, []brief{
			cp("B.MD", "B.MD"), gen("B.html", "B.MD"),
			gen("a.html", "a.md"), cp("a.md", "a.md"),
			cp("md.txt", "md.txt"), cp("notes.txt", "notes.txt"),
			gen("sub/c.html", "sub/c.markdown"), cp("sub/c.markdown", "sub/c.markdown"),
			cp("sub/img.png", "sub/img.png"), cp("sub/x.md.backup", "sub/x.md.backup"),
		}},
		{true, config.SourceAssets, []brief{
			gen("B.html", "B.MD"), gen("a.html", "a.md"),
			cp("md.txt", "md.txt"), cp("notes.txt", "notes.txt"),
			gen("sub/c.html", "sub/c.markdown"),
			cp("sub/img.png", "sub/img.png"), cp("sub/x.md.backup", "sub/x.md.backup"),
		}},
		{true, "", []brief{ // "" means the default, assets
			gen("B.html", "B.MD"), gen("a.html", "a.md"),
			cp("md.txt", "md.txt"), cp("notes.txt", "notes.txt"),
			gen("sub/c.html", "sub/c.markdown"),
			cp("sub/img.png", "sub/img.png"), cp("sub/x.md.backup", "sub/x.md.backup"),
		}},
		{true, config.SourceNone, []brief{
			gen("B.html", "B.MD"), gen("a.html", "a.md"), gen("sub/c.html", "sub/c.markdown"),
		}},
		{false, config.SourceAll, []brief{
			cp("B.MD", "B.MD"), cp("a.md", "a.md"),
			cp("md.txt", "md.txt"), cp("notes.txt", "notes.txt"),
			cp("sub/c.markdown", "sub/c.markdown"),
			cp("sub/img.png", "sub/img.png"), cp("sub/x.md.backup", "sub/x.md.backup"),
		}},
		{false, config.SourceAssets, []brief{
			cp("md.txt", "md.txt"), cp("notes.txt", "notes.txt"),
			cp("sub/img.png", "sub/img.png"), cp("sub/x.md.backup", "sub/x.md.backup"),
		}},
		{false, config.SourceNone, []brief{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("html=%v,source=%q", tt.html, tt.source), func(t *testing.T) {
			d := dest()
			d.Publish = config.Publish{HTML: tt.html, Source: tt.source}
			res := planFor(t, files, d, "")
			if diff := cmp.Diff(tt.want, briefs(res)); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			if res.Outputs == nil {
				t.Error("Outputs is nil, want non-nil")
			}
		})
	}
}

func TestPlanRenameAndPrefix(t *testing.T) {
	files := map[string]string{
		"report.md":    "# Report\n",
		"data.csv":     "a,b\n",
		"extra.md":     "# Extra\n",
		"img/logo.png": "png",
	}
	tests := []struct {
		name   string
		source string
		rename map[string]string
		prefix string
		want   []brief
	}{
		{"prefix only", config.SourceAll, nil, "tomorrow/", []brief{
			cp("tomorrow/data.csv", "data.csv"),
			gen("tomorrow/extra.html", "extra.md"), cp("tomorrow/extra.md", "extra.md"),
			cp("tomorrow/img/logo.png", "img/logo.png"),
			gen("tomorrow/report.html", "report.md"), cp("tomorrow/report.md", "report.md"),
		}},
		{"rename then prefix", config.SourceAll,
			map[string]string{"report.md": "index.md", "data.csv": "data/latest.csv", "img/logo.png": "logo.png"},
			"tomorrow/", []brief{
				cp("tomorrow/data/latest.csv", "data.csv"),
				gen("tomorrow/extra.html", "extra.md"), cp("tomorrow/extra.md", "extra.md"),
				gen("tomorrow/index.html", "report.md"), cp("tomorrow/index.md", "report.md"),
				cp("tomorrow/logo.png", "img/logo.png"),
			}},
		{"rename to other markdown extension", config.SourceAssets,
			map[string]string{"report.md": "sub/Page.Markdown"}, "", []brief{
				cp("data.csv", "data.csv"),
				gen("extra.html", "extra.md"),
				cp("img/logo.png", "img/logo.png"),
				gen("sub/Page.html", "report.md"),
			}},
		{"rename target without markdown extension is used as is", config.SourceAssets,
			map[string]string{"report.md": "latest.html"}, "", []brief{
				cp("data.csv", "data.csv"),
				gen("extra.html", "extra.md"),
				cp("img/logo.png", "img/logo.png"),
				gen("latest.html", "report.md"),
			}},
		{"prefix without slash is verbatim", config.SourceNone, nil, "v1-", []brief{
			gen("v1-extra.html", "extra.md"), gen("v1-report.html", "report.md"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dest()
			d.Publish.Source = tt.source
			d.Paths.Rename = tt.rename
			res := planFor(t, files, d, tt.prefix)
			if diff := cmp.Diff(tt.want, briefs(res)); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanOutputFields(t *testing.T) {
	files := map[string]string{"a.md": "# A\n", "b.bin": "\x00\x01\x02"}
	b := newBundle(t, files)
	d := dest()
	d.Publish.Source = config.SourceAll
	res, err := Plan(context.Background(), b, d, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Outputs {
		switch o.Kind {
		case KindSource:
			if o.Content != nil {
				t.Errorf("%s: Content = %q, want nil for a copy", o.Path, o.Content)
			}
			if want := digestOf(files[o.SourcePath]); o.SHA256 != want || o.Size != int64(len(files[o.SourcePath])) {
				t.Errorf("%s: SHA256, Size = %s, %d; want manifest's %s, %d", o.Path, o.SHA256, o.Size, want, len(files[o.SourcePath]))
			}
		case KindGenerated:
			if len(o.Content) == 0 {
				t.Fatalf("%s: empty Content", o.Path)
			}
			if o.SHA256 != digestOf(string(o.Content)) || o.Size != int64(len(o.Content)) {
				t.Errorf("%s: SHA256, Size = %s, %d; do not describe Content", o.Path, o.SHA256, o.Size)
			}
		}
	}
}

func TestPlanURLs(t *testing.T) {
	files := map[string]string{
		"index.md":       "# Home\n",
		"x/index.md":     "# X\n",
		"x/page.md":      "# Page\n",
		"a b/ü?#.png":    "png",
		"x/index.html.1": "not an index",
	}
	tests := []struct {
		name  string
		links config.Links
		want  map[string]string
	}{
		{"no base url", config.Links{Pretty: true}, map[string]string{
			"index.html": "", "x/index.html": "", "x/page.html": "", "a b/ü?#.png": "", "x/index.html.1": "",
		}},
		{"plain", config.Links{BaseURL: "https://r.example.com/w/"}, map[string]string{
			"index.html":     "https://r.example.com/w/index.html",
			"x/index.html":   "https://r.example.com/w/x/index.html",
			"x/page.html":    "https://r.example.com/w/x/page.html",
			"a b/ü?#.png":    "https://r.example.com/w/a%20b/%C3%BC%3F%23.png",
			"x/index.html.1": "https://r.example.com/w/x/index.html.1",
		}},
		{"pretty", config.Links{BaseURL: "https://r.example.com/w/", Pretty: true}, map[string]string{
			"index.html":     "https://r.example.com/w/",
			"x/index.html":   "https://r.example.com/w/x/",
			"x/page.html":    "https://r.example.com/w/x/page.html",
			"a b/ü?#.png":    "https://r.example.com/w/a%20b/%C3%BC%3F%23.png",
			"x/index.html.1": "https://r.example.com/w/x/index.html.1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dest()
			d.Links = tt.links
			res := planFor(t, files, d, "")
			got := map[string]string{}
			for _, o := range res.Outputs {
				got[o.Path] = o.URL
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("URLs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanPrimaryURL(t *testing.T) {
	const base = "https://example.com/r/"
	tests := []struct {
		name   string
		files  []string
		html   bool
		prefix string
		links  config.Links
		want   string
	}{
		{"index at prefix root", []string{"a.md", "index.md", "sub/index.md"}, true, "t/",
			config.Links{BaseURL: base}, base + "t/index.html"},
		{"index at prefix root, pretty", []string{"a.md", "index.md"}, true, "t/",
			config.Links{BaseURL: base, Pretty: true}, base + "t/"},
		{"root index without prefix, pretty", []string{"a.md", "index.md"}, true, "",
			config.Links{BaseURL: base, Pretty: true}, base},
		{"no root index: first generated by path", []string{"b.md", "sub/index.md", "a.png"}, true, "",
			config.Links{BaseURL: base}, base + "b.html"},
		{"no generated: first output by path", []string{"b.md", "z.txt", "c.png"}, false, "",
			config.Links{BaseURL: base}, base + "c.png"},
		{"no base url", []string{"index.md"}, true, "", config.Links{}, ""},
		{"no outputs", []string{"a.md"}, false, "", config.Links{BaseURL: base}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for _, f := range tt.files {
				files[f] = "# " + f + "\n"
			}
			d := dest()
			d.Publish.HTML = tt.html
			d.Links = tt.links
			if got := planFor(t, files, d, tt.prefix).PrimaryURL; got != tt.want {
				t.Errorf("PrimaryURL = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPlanCollisions(t *testing.T) {
	tests := []struct {
		name   string
		files  []string
		source string
		rename map[string]string
		want   CollisionError
	}{
		{"rendered vs copied html", []string{"a.md", "a.html"}, config.SourceAssets, nil,
			CollisionError{"a.html", [2]string{"a.md", "a.html"}, [2]string{KindGenerated, KindSource}}},
		{"two renames to one target", []string{"x.txt", "y.txt"}, config.SourceAssets,
			map[string]string{"x.txt": "out.txt", "y.txt": "out.txt"},
			CollisionError{"out.txt", [2]string{"x.txt", "y.txt"}, [2]string{KindSource, KindSource}}},
		{"rename onto an existing file", []string{"x.txt", "y.txt"}, config.SourceAssets,
			map[string]string{"y.txt": "x.txt"},
			CollisionError{"x.txt", [2]string{"x.txt", "y.txt"}, [2]string{KindSource, KindSource}}},
		{"md and markdown of one name", []string{"r.md", "r.markdown"}, config.SourceNone, nil,
			CollisionError{"r.html", [2]string{"r.markdown", "r.md"}, [2]string{KindGenerated, KindGenerated}}},
		{"markdown renamed to html and copied", []string{"r.md"}, config.SourceAll,
			map[string]string{"r.md": "r.html"},
			CollisionError{"r.html", [2]string{"r.md", "r.md"}, [2]string{KindGenerated, KindSource}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for _, f := range tt.files {
				files[f] = "content of " + f
			}
			d := dest()
			d.Publish.Source = tt.source
			d.Paths.Rename = tt.rename
			_, err := Plan(context.Background(), newBundle(t, files), d, "")
			var ce *CollisionError
			if !errors.As(err, &ce) {
				t.Fatalf("Plan error = %v, want a *CollisionError", err)
			}
			if diff := cmp.Diff(tt.want, *ce); diff != "" {
				t.Errorf("collision (-want +got):\n%s", diff)
			}
			for _, s := range []string{tt.want.Path, tt.want.SourcePaths[0], tt.want.SourcePaths[1]} {
				if !strings.Contains(err.Error(), `"`+s+`"`) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
		})
	}
}

func TestPlanInvalidPaths(t *testing.T) {
	tests := []struct {
		name     string
		prefix   string
		rename   map[string]string
		wantPath string // named in the error
	}{
		{"parent prefix", "../", nil, "../a.html"},
		{"absolute prefix", "/srv/", nil, "/srv/a.html"},
		{"reserved prefix", ".distributor-x/", nil, ".distributor-x/a.html"},
		{"empty segment", "x//", nil, "x//a.html"},
		{"rename escaping", "", map[string]string{"a.md": "../a.md"}, "../a.md"},
		{"rename to reserved", "", map[string]string{"a.md": ".distributor.json"}, ".distributor.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dest()
			d.Paths.Rename = tt.rename
			_, err := Plan(context.Background(), newBundle(t, map[string]string{"a.md": "# A\n"}), d, tt.prefix)
			if _, ok := errors.AsType[*cleanpath.Error](err); !ok {
				t.Fatalf("Plan error = %v, want one wrapping a *cleanpath.Error", err)
			}
			if !strings.Contains(err.Error(), `"`+tt.wantPath+`"`) {
				t.Errorf("error %q does not name %q", err, tt.wantPath)
			}
		})
	}
}

func TestPlanRenameUnknownKey(t *testing.T) {
	d := dest()
	d.Paths.Rename = map[string]string{"report.md": "index.md", "reprot.md": "index.md"}
	_, err := Plan(context.Background(), newBundle(t, map[string]string{"report.md": "# R\n"}), d, "")
	if err == nil || !strings.Contains(err.Error(), `"reprot.md"`) {
		t.Fatalf("Plan error = %v, want one naming the unknown rename key", err)
	}
}

func TestPlanBadPublishSource(t *testing.T) {
	d := dest()
	d.Publish.Source = "everything"
	_, err := Plan(context.Background(), newBundle(t, map[string]string{"a.md": "# A\n"}), d, "")
	if err == nil || !strings.Contains(err.Error(), "everything") {
		t.Fatalf("Plan error = %v, want one naming the bad publish.source", err)
	}
}

func TestPlanCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Plan(ctx, newBundle(t, map[string]string{"a.md": "# A\n"}), dest(), "")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Plan error = %v, want context.Canceled", err)
	}
}

func TestPlanSourceMismatch(t *testing.T) {
	tests := []struct {
		name   string
		modify func(t *testing.T, file string)
		is     error
	}{
		{"same size, other bytes", func(t *testing.T, file string) {
			if err := os.WriteFile(file, []byte("# B\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrSourceMismatch},
		{"longer", func(t *testing.T, file string) {
			if err := os.WriteFile(file, []byte("# A\nmore\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrSourceMismatch},
		{"missing", func(t *testing.T, file string) {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}, os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBundle(t, map[string]string{"sub/a.md": "# A\n", "z.md": "# Z\n"})
			tt.modify(t, filepath.Join(b.Dir, "sub", "a.md"))
			_, err := Plan(context.Background(), b, dest(), "")
			if !errors.Is(err, tt.is) {
				t.Fatalf("Plan error = %v, want one matching %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), `"sub/a.md"`) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestPlanDeterministic(t *testing.T) {
	files := map[string]string{
		"index.md":       "# Report\n\n## Intro\n\n## Intro\n\nSee [details](sub/details.md#intro)[^n].\n\n[^n]: A note.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
		"sub/details.md": "# Details\n\nBack to [the report](../index.md).\n",
		"chart.png":      "png",
	}
	d := dest()
	d.Publish.Source = config.SourceAll
	d.Links = config.Links{BaseURL: "https://example.com/", Pretty: true}
	d.Paths.Rename = map[string]string{"chart.png": "img/chart.png", "sub/details.md": "details.md"}
	first := planFor(t, files, d, "daily/")
	for range 3 {
		// A fresh bundle directory each time: the bundle's location must
		// not leak into outputs either.
		again := planFor(t, files, d, "daily/")
		if diff := cmp.Diff(first, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("second Plan differs (-first +again):\n%s", diff)
		}
	}
}

func TestBuiltinPage(t *testing.T) {
	res := planFor(t, map[string]string{"r.md": "# Fish & <Chips>\n\ntext\n"}, dest(), "")
	page := string(output(t, res, "r.html").Content)
	for _, want := range []string{
		"<!doctype html>\n",
		`<html lang="en">`,
		`<meta charset="utf-8">`,
		`<meta name="viewport" content="width=device-width, initial-scale=1">`,
		"<title>Fish &amp; &lt;Chips&gt;</title>",
		"prefers-color-scheme: dark",
		"max-width: 70ch",
		"overflow-x: auto",
		"img, video { max-width: 100%",
		// Numeric columns do not wrap; tables are compact on a phone.
		`td[style*="text-align:right"], td[style*="text-align:center"] { white-space: nowrap; }`,
		"@media (max-width: 40em)",
		// Task list boxes are drawn, readable when disabled and in print.
		"li > input[type=checkbox]:checked {",
		"print-color-adjust: exact",
		"<p>text</p>",
		"<footer>\n<p>Source <code>weather.tomorrow</code></p>\n</footer>",
		"</html>\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestBuiltinPageIgnoresReseal: resealing a bundle gives it a new created
// time (bundle seal defaults to now) and, when any file changed, a new
// digest; the built-in page of an unchanged Markdown file keeps its bytes,
// so it is not rewritten.
func TestBuiltinPageIgnoresReseal(t *testing.T) {
	files := map[string]string{"a.md": "# A\n\nSee [b](b.md).\n", "b.md": "# B\n"}
	d := dest()
	d.Links = config.Links{BaseURL: "https://example.com/"}
	b := newBundle(t, files)
	first := plan2(t, b, d)
	b.Manifest.Created = testCreated.Add(36 * time.Hour)
	b.Manifest.Digest = digestOf("resealed")
	again := plan2(t, b, d)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("outputs depend on the manifest's created time or digest (-first +resealed):\n%s", diff)
	}
	page := string(output(t, first, "a.html").Content)
	for _, stamp := range []string{"2026", testCreated.Format(time.RFC3339), "sha256:"} {
		if strings.Contains(page, stamp) {
			t.Errorf("page shows %q:\n%s", stamp, page)
		}
	}
}

func TestTitle(t *testing.T) {
	tests := []struct {
		name, file, src, want string
		rawHTML               bool
	}{
		{"raw html escaped shows in title", "r.md", "# A <b>bold</b> move\n", "A <b>bold</b> move", false},
		{"raw html passed is dropped from title", "r.md", "# A <b>bold</b> move\n", "A bold move", true},
		{"first heading", "r.md", "intro\n\n## Second *level* `code`\n\n# Top\n", "Second level code", false},
		{"setext", "r.md", "Big  Title\n==========\n", "Big Title", false},
		{"link in heading", "r.md", "# See [docs](x.md) <https://x.org>\n", "See docs https://x.org", false},
		{"empty heading skipped", "r.md", "#\n\n# Real\n", "Real", false},
		{"no heading: file name", "sub/weekly-report.markdown", "just text\n", "weekly-report", false},
		{"no heading: upper-case extension", "NOTES.MD", "text\n", "NOTES", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dest()
			d.Markdown.Template = writeFile(t, "t.tmpl", "{{.Title}}")
			d.Markdown.RawHTML = tt.rawHTML
			res := planFor(t, map[string]string{tt.file: tt.src}, d, "")
			if got := html.UnescapeString(string(res.Outputs[0].Content)); got != tt.want {
				t.Errorf("title = %q, want %q", got, tt.want)
			}
		})
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCustomTemplate(t *testing.T) {
	d := dest()
	d.Markdown.Template = writeFile(t, "page.tmpl",
		`{{.Title}}|{{.Content}}|{{.Source.ID}}|{{.Source.Digest}}|{{.Source.Created.Format "2006-01-02T15:04Z"}}|{{.Path}}`)
	d.Paths.Rename = map[string]string{"r.md": "index.md"}
	b := newBundle(t, map[string]string{"r.md": "# T & U\n\nhi\n"})
	res, err := Plan(context.Background(), b, d, "x/")
	if err != nil {
		t.Fatal(err)
	}
	want := "T &amp; U|<h1 id=\"t--u\">T &amp; U</h1>\n<p>hi</p>\n|weather.tomorrow|" + b.Manifest.Digest +
		"|2026-06-19T12:00Z|x/index.html"
	if got := string(output(t, res, "x/index.html").Content); got != want {
		t.Errorf("page = %q, want %q", got, want)
	}
}

func TestBadTemplate(t *testing.T) {
	tests := []struct {
		name    string
		content string // "" for a missing file
	}{
		{"parse error", "{{.Title"},
		{"execute error", "{{.NoSuchField}}"},
		{"missing file", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "missing.tmpl")
			if tt.content != "" {
				file = writeFile(t, "bad.tmpl", tt.content)
			}
			d := dest()
			d.Markdown.Template = file
			_, err := Plan(context.Background(), newBundle(t, map[string]string{"a.md": "# A\n"}), d, "")
			if err == nil || !strings.Contains(err.Error(), file) {
				t.Fatalf("Plan error = %v, want one naming %s", err, file)
			}
		})
	}
}

// A paths.rename key that is no bundle file names its config line and
// suggests the closest file, or lists some when none is close.
func TestCheckRenamesSuggests(t *testing.T) {
	files := &bundle.Manifest{Files: []bundle.File{{Path: "img/a.svg"}, {Path: "methods.md"}, {Path: "report.md"}}}
	tests := []struct{ key, want string }{
		{"reprot.md", `paths.rename (config line 7): "reprot.md" is not a file of the bundle; did you mean "report.md"?`},
		{"summary.md", `paths.rename (config line 7): "summary.md" is not a file of the bundle; the bundle's files are img/a.svg, methods.md, report.md`},
	}
	for _, tt := range tests {
		p := config.Paths{Rename: map[string]string{tt.key: "index.md"}, RenameLines: map[string]int{tt.key: 7}}
		if err := checkRenames(p, files); err == nil || err.Error() != tt.want {
			t.Errorf("got  %v\nwant %s", err, tt.want)
		}
	}
}
