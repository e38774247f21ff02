package render

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distributor-dev/distributor/internal/config"
)

// linkBundle is a report with every kind of good link (lines 3-14) and of
// broken one (lines 16-23), and a page in a folder with one of each.
var linkBundle = map[string]string{
	"report.md": strings.Join([]string{
		"# Report", // 1
		"",
		"[methods](methods.md), [section](methods.md#ensemble), [data](data/today.csv?dl=1)",
		"![chart](img/chart.svg) [folder](img/) [here](./) [notes](sub/notes.html)",
		"[archive](../index.html) [feed](../feed.xml)",
		"[yesterday](../2026-06-18/index.html) [above the root](../../../x.html)",
		"[site](https://example.com/missing.md) [mail](mailto:ops@example.com) [top](#top)",
		"[root](/elsewhere.html) [query](?page=2) <https://example.com/auto> www.example.com/linkify",
		"[ref][good]",
		"",
		"[good]: methods.md",
		"",
		`<img src="img/raw.png"> <a href="raw.md">raw HTML is not looked at</a>`,
		"", // 14
		"",
		"See [x](missing.md) and ![](img/nope.png).", // 16
		"[ref][gone]",
		"[draft](drafts/next.md)",
		"![spaced](img/a%20b.png)",
		"",
		"| a |",
		"| - |",
		"| [cell](nope.txt) |", // 23
		"",
		"[gone]: gone.csv",
		"",
	}, "\n"),
	"methods.md":     "# Methods\n\n## Ensemble\n",
	"data/today.csv": "a,b\n",
	"img/chart.svg":  "<svg/>",
	"drafts/next.md": "# Next\n",
	"sub/notes.md":   "# Notes\n\n[up](../report.md)\n\n![up](../img/missing.svg)\n",
}

var linkWarnings = []string{
	`report.md:16: link to "missing.md": no file missing.md in the bundle`,
	`report.md:16: image "img/nope.png": no file img/nope.png in the bundle`,
	`report.md:17: link to "gone.csv": no file gone.csv in the bundle`,
	`report.md:18: link to "drafts/next.md": this destination does not publish the bundle's drafts/next.md`,
	`report.md:19: image "img/a%20b.png": no file img/a b.png in the bundle`,
	`report.md:23: link to "nope.txt": no file nope.txt in the bundle`,
	`sub/notes.md:5: image "../img/missing.svg": no file img/missing.svg in the bundle`,
}

func linkDest() *config.Destination {
	d := dest()
	d.Publish.Exclude = []string{"drafts/**"}
	d.Index = &config.Index{Path: "index.html", Feed: "feed.xml"}
	d.Links.BaseURL = "https://r.example.com/"
	return d
}

// TestBrokenLinks: a relative link or image whose target this destination
// does not publish warns with file:line, the target as written and what is
// missing; absolute URLs, mailto:, fragments, root-relative and query-only
// references, links to outputs (Markdown rewritten to HTML included), to
// folders holding outputs, to the archive index and feed, and links out of
// the paths.prefix folder or above the root do not. Raw HTML is not looked
// at.
func TestBrokenLinks(t *testing.T) {
	d := linkDest()
	res := planFor(t, linkBundle, d, "2026-06-19/")
	if diff := cmp.Diff(linkWarnings, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// Checking changes no byte: the broken links are left as written.
	page := string(output(t, res, "2026-06-19/report.html").Content)
	for _, want := range []string{`href="methods.html#ensemble"`, `href="missing.md"`, `src="img/nope.png"`, `href="gone.csv"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}

}

// TestBrokenLinksRoot: without paths.prefix the whole root is the
// publication's, the archive index and feed included.
func TestBrokenLinksRoot(t *testing.T) {
	files := map[string]string{"report.md": "[archive](index.html) [feed](feed.xml)\n[other](2026-06-18/index.html)\n"}
	d := linkDest()
	d.Publish.Exclude = nil
	res := planFor(t, files, d, "")
	want := []string{`report.md:2: link to "2026-06-18/index.html": no file 2026-06-18/index.html in the bundle`}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	d.Index = nil
	res = planFor(t, files, d, "")
	want = []string{
		`report.md:1: link to "index.html": no file index.html in the bundle`,
		`report.md:1: link to "feed.xml": no file feed.xml in the bundle`,
		want[0],
	}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings without an index (-want +got):\n%s", diff)
	}
}

// TestBrokenLinksMoved: a link that is right in the bundle breaks when
// paths.rename moves the page away from its target, and one to a file
// publish.source does not copy breaks too; with publish.html off no page is
// rendered, so none is checked.
func TestBrokenLinksMoved(t *testing.T) {
	files := map[string]string{"docs/report.md": "# R\n\n![chart](img/chart.svg)\n", "docs/img/chart.svg": "<svg/>"}
	d := dest()
	d.Paths.Rename = map[string]string{"docs/report.md": "index.md"}
	res := planFor(t, files, d, "")
	want := []string{`docs/report.md:3: image "img/chart.svg": the bundle has docs/img/chart.svg, but this destination publishes nothing at img/chart.svg`}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	d = dest()
	d.Publish.Source = config.SourceNone
	res = planFor(t, files, d, "")
	want = []string{`docs/report.md:3: image "img/chart.svg": this destination does not publish the bundle's docs/img/chart.svg`}
	if diff := cmp.Diff(want, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	d.Publish = config.Publish{HTML: false, Source: config.SourceAll}
	if res = planFor(t, files, d, ""); len(res.Warnings) != 0 {
		t.Errorf("warnings without publish.html: %q", res.Warnings)
	}
}

// TestBrokenLinksFail: with links.missing: fail, Plan fails naming every
// broken link (file:line and target), and plans nothing; good links pass.
func TestBrokenLinksFail(t *testing.T) {
	d := linkDest()
	d.Links.Missing = config.MissingFail
	b := newBundle(t, linkBundle)
	res, err := Plan(context.Background(), b, d, "2026-06-19/")
	var be *BrokenLinksError
	if !errors.As(err, &be) || res != nil {
		t.Fatalf("Plan: %v, %v; want a *BrokenLinksError", res, err)
	}
	want := "7 broken links (links.missing is fail: fix them, or set links.missing: warn to publish anyway): " + strings.Join(linkWarnings, "; ")
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	d.Publish.Exclude = nil
	good := map[string]string{"report.md": "[m](methods.md) ![c](img/chart.svg)\n", "methods.md": "# M\n", "img/chart.svg": "<svg/>"}
	if res := planFor(t, good, d, ""); len(res.Warnings) != 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// TestBrokenLinksErrorText: one link is singular; past brokenShown the
// error counts the rest.
func TestBrokenLinksErrorText(t *testing.T) {
	one := &BrokenLinksError{Links: []BrokenLink{{Source: "a.md", Line: 2, Target: "b.md", Reason: "no file b.md in the bundle"}}}
	if got, want := one.Error(), `1 broken link (links.missing is fail: fix them, or set links.missing: warn to publish anyway): a.md:2: link to "b.md": no file b.md in the bundle`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	many := &BrokenLinksError{}
	for i := range brokenShown + 3 {
		many.Links = append(many.Links, BrokenLink{Source: "a.md", Line: i + 1, Image: true, Target: fmt.Sprint(i, ".png"), Reason: "r"})
	}
	if got := many.Error(); !strings.HasPrefix(got, "13 broken links (") || !strings.HasSuffix(got, `a.md:10: image "9.png": r; and 3 more`) {
		t.Errorf("error %s", got)
	}
}
