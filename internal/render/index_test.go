package render

import (
	"bytes"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/distributor-dev/distributor/internal/config"
)

func indexDest() *config.Destination {
	d := dest()
	d.ID = "archive"
	d.Links = config.Links{BaseURL: "https://r.example.com/air/", Pretty: true}
	d.Index = &config.Index{Path: "index.html", Title: "Air <quality>", Feed: "feed.xml", FeedEntries: 2}
	return d
}

func src(id string, day int) PageSource {
	return PageSource{ID: id, Digest: "sha256:" + strings.Repeat(string(rune('a'+day)), 64), Created: time.Date(2026, 6, day, 6, 0, 0, 0, time.UTC)}
}

func irec(p, destID, kind, transform string, s PageSource) IndexRecord {
	return IndexRecord{Path: p, DestinationID: destID, Kind: kind, Transform: transform, Source: s}
}

// TestIndexEntries: one entry per source identity with outputs of this
// destination id (whatever the pipeline), newest first, each at its primary
// page; the index and feed themselves and other destinations' outputs are
// not reports.
func TestIndexEntries(t *testing.T) {
	d := indexDest()
	s19, s20, s21, other := src("air.daily", 19), src("air.daily", 20), src("air.special", 21), src("traffic", 22)
	recs := []IndexRecord{
		irec("2026-06-19/data.csv", "archive", KindSource, "", s19),
		irec("2026-06-19/notes.html", "archive", KindGenerated, TransformMarkdown, s19),
		irec("2026-06-19/index.html", "archive", KindGenerated, TransformMarkdown, s19),
		irec("2026-06-19/sub/index.html", "archive", KindGenerated, TransformMarkdown, s19),
		irec("2026-06-20/b.html", "archive", KindGenerated, TransformMarkdown, s20),
		irec("2026-06-20/a.html", "archive", KindGenerated, TransformMarkdown, s20),
		irec("special/z.csv", "archive", KindSource, "", s21),
		irec("special/y.csv", "archive", KindSource, "", s21),
		irec("traffic/index.html", "traffic-site", KindGenerated, TransformMarkdown, other),
		irec("index.html", "archive", KindGenerated, TransformIndex, s21),
		irec("feed.xml", "archive", KindGenerated, TransformFeed, s21),
	}
	got := IndexEntries(d, recs)
	// The page links relatively, also with a base_url (URL is the feed's).
	want := []IndexEntry{
		{Source: s21, Path: "special/y.csv", URL: "https://r.example.com/air/special/y.csv", Href: "special/y.csv"},
		{Source: s20, Path: "2026-06-20/a.html", URL: "https://r.example.com/air/2026-06-20/a.html", Href: "2026-06-20/a.html"},
		{Source: s19, Path: "2026-06-19/index.html", URL: "https://r.example.com/air/2026-06-19/", Href: "2026-06-19/"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	// From the index page's own directory; without base_url, no URL.
	d.Links.BaseURL = ""
	d.Index.Path = "archive/index.html"
	got = IndexEntries(d, recs)
	if hrefs := []string{got[0].Href, got[1].Href, got[2].Href}; !cmp.Equal(hrefs, []string{"../special/y.csv", "../2026-06-20/a.html", "../2026-06-19/"}) {
		t.Errorf("relative hrefs %v", hrefs)
	}
	if got[0].URL != "" {
		t.Errorf("URL %q without links.base_url", got[0].URL)
	}
}

func TestRelativeHref(t *testing.T) {
	for _, tc := range []struct {
		dir, p string
		pretty bool
		want   string
	}{
		{".", "2026-06-19/index.html", true, "2026-06-19/"},
		{".", "2026-06-19/index.html", false, "2026-06-19/index.html"},
		{".", "index.html", true, "./"},
		{"archive", "archive/2026/index.html", true, "2026/"},
		{"archive", "other/a b.html", false, "../other/a%20b.html"},
		{"a/b", "a/c/d.html", false, "../c/d.html"},
		{"a", "a", false, "../a"},
	} {
		if got := relativeHref(tc.dir, tc.p, tc.pretty); got != tc.want {
			t.Errorf("relativeHref(%q, %q, %v) = %q, want %q", tc.dir, tc.p, tc.pretty, got, tc.want)
		}
	}
}

// TestIndexPageAndFeed: the page is the built-in page around the list,
// titled index.title; the feed is Atom 1.0 with every element RFC 4287
// requires, limited to feed_entries; the same input gives the same bytes.
func TestIndexPageAndFeed(t *testing.T) {
	d := indexDest()
	entries := IndexEntries(d, []IndexRecord{
		irec("2026-06-19/index.html", "archive", KindGenerated, TransformMarkdown, src("air.daily", 19)),
		irec("2026-06-20/index.html", "archive", KindGenerated, TransformMarkdown, src("air.daily", 20)),
		irec("2026-06-21/index.html", "archive", KindGenerated, TransformMarkdown, src("air.daily", 21)),
	})
	outs, err := Index(d, entries)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0].Path != "index.html" || outs[0].Transform != TransformIndex || outs[1].Path != "feed.xml" || outs[1].Transform != TransformFeed {
		t.Fatalf("outputs %+v", briefsOf(outs))
	}
	for _, o := range outs {
		if o.Kind != KindGenerated || o.SourcePath != "" || o.SHA256 != sha256Digest(o.Content) || o.Size != int64(len(o.Content)) {
			t.Errorf("%s: %+v", o.Path, brief{o.Path, o.Kind, o.SourcePath, o.Transform})
		}
	}
	page := string(outs[0].Content)
	for _, want := range []string{
		"<!doctype html>", `<meta name="viewport"`, "<title>Air &lt;quality&gt;</title>", "<h1>Air &lt;quality&gt;</h1>",
		`<a href="2026-06-21/">air.daily</a> <time datetime="2026-06-21T06:00:00Z">2026-06-21 06:00 UTC</time>`,
		`<a href="feed.xml" type="application/atom+xml">Atom feed</a>`, "3 reports, newest first.",
		// The footer describes the archive, not the newest report's source.
		"<footer>\n<p>Archive of 3 reports, 2026-06-19 to 2026-06-21</p>\n</footer>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("index page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "Source <code>") {
		t.Errorf("index page footer names one source:\n%s", page)
	}
	if strings.Index(page, "2026-06-21/") > strings.Index(page, "2026-06-19/") {
		t.Error("index page is not newest first")
	}
	if strings.Contains(page, "https://") {
		t.Errorf("index page links absolutely:\n%s", page)
	}
	checkAtom(t, outs[1].Content, 2)

	again, err := Index(d, entries)
	if err != nil {
		t.Fatal(err)
	}
	for i := range outs {
		if !bytes.Equal(outs[i].Content, again[i].Content) {
			t.Errorf("%s differs between two renders", outs[i].Path)
		}
	}
	// A custom page template renders the index too.
	d.Markdown.Template = writeFile(t, "page.tmpl", `<t>{{.Title}}</t>{{.Content}}<p>{{.Path}}</p>`)
	outs, err = Index(d, entries)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(outs[0].Content); !strings.HasPrefix(got, "<t>Air &lt;quality&gt;</t><h1>") || !strings.HasSuffix(got, "<p>index.html</p>") {
		t.Errorf("custom template index:\n%s", got)
	}
}

// TestIndexLinksRelativeFeedAbsolute: with links.base_url the index page
// still links relatively from its own directory, so that a preview of the
// root sends no reader to production, while every link of the Atom feed
// stays absolute (RFC 4287 ids and a feed read out of context).
func TestIndexLinksRelativeFeedAbsolute(t *testing.T) {
	d := indexDest()
	d.Index.Path, d.Index.Feed = "archive/index.html", "archive/feed.xml"
	outs, err := Index(d, IndexEntries(d, []IndexRecord{
		irec("2026-06-19/index.html", "archive", KindGenerated, TransformMarkdown, src("air.daily", 19)),
		irec("archive/2026-06-20/report.html", "archive", KindGenerated, TransformMarkdown, src("air.daily", 20)),
	}))
	if err != nil {
		t.Fatal(err)
	}
	hrefs := regexp.MustCompile(`href="([^"]*)"`)
	var got []string
	for _, m := range hrefs.FindAllStringSubmatch(string(outs[0].Content), -1) {
		got = append(got, m[1])
	}
	if want := []string{"feed.xml", "2026-06-20/report.html", "../2026-06-19/"}; !cmp.Equal(got, want) {
		t.Errorf("index page hrefs %q, want %q", got, want)
	}
	got = nil
	for _, m := range hrefs.FindAllStringSubmatch(string(outs[1].Content), -1) {
		got = append(got, m[1])
	}
	want := []string{"https://r.example.com/air/archive/feed.xml", "https://r.example.com/air/archive/",
		"https://r.example.com/air/archive/2026-06-20/report.html", "https://r.example.com/air/2026-06-19/"}
	if !cmp.Equal(got, want) {
		t.Errorf("feed hrefs %q, want %q", got, want)
	}
	if !bytes.Contains(outs[1].Content, []byte("<id>https://r.example.com/air/2026-06-19/</id>")) {
		t.Errorf("feed entry ids are not absolute:\n%s", outs[1].Content)
	}
}

// TestIndexFooter: the built-in page's footer on the index counts the
// reports and spans their days.
func TestIndexFooter(t *testing.T) {
	d := indexDest()
	d.Index.Feed = ""
	for _, tc := range []struct {
		recs []IndexRecord
		want string
	}{
		{nil, "<p>Archive of 0 reports</p>"},
		{[]IndexRecord{irec("a/index.html", "archive", KindGenerated, TransformMarkdown, src("air.daily", 19))}, "<p>Archive of 1 report, 2026-06-19</p>"},
		{[]IndexRecord{
			irec("a/index.html", "archive", KindGenerated, TransformMarkdown, src("air.daily", 19)),
			irec("b/index.html", "archive", KindGenerated, TransformMarkdown, src("air.special", 19)),
		}, "<p>Archive of 2 reports, 2026-06-19</p>"},
	} {
		outs, err := Index(d, IndexEntries(d, tc.recs))
		if err != nil {
			t.Fatal(err)
		}
		if page := string(outs[0].Content); !strings.Contains(page, "<footer>\n"+tc.want+"\n</footer>") {
			t.Errorf("%d records: footer is not %q:\n%s", len(tc.recs), tc.want, page[strings.Index(page, "<footer>"):])
		}
	}
}

func briefsOf(outs []Output) []brief {
	return briefs(&Result{Outputs: outs})
}

// checkAtom parses an Atom feed and checks what RFC 4287 requires: the feed
// has id, title, updated, an author (or every entry has one) and a
// rel="self" link (recommended); each entry has id, title, updated and a
// link (an entry without content needs a rel="alternate" link).
func checkAtom(t *testing.T, data []byte, entries int) {
	t.Helper()
	type link struct {
		Rel  string `xml:"rel,attr"`
		Href string `xml:"href,attr"`
	}
	var feed struct {
		XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
		ID      string   `xml:"http://www.w3.org/2005/Atom id"`
		Title   string   `xml:"http://www.w3.org/2005/Atom title"`
		Updated string   `xml:"http://www.w3.org/2005/Atom updated"`
		Author  []struct {
			Name string `xml:"http://www.w3.org/2005/Atom name"`
		} `xml:"http://www.w3.org/2005/Atom author"`
		Links   []link `xml:"http://www.w3.org/2005/Atom link"`
		Entries []struct {
			ID      string `xml:"http://www.w3.org/2005/Atom id"`
			Title   string `xml:"http://www.w3.org/2005/Atom title"`
			Updated string `xml:"http://www.w3.org/2005/Atom updated"`
			Links   []link `xml:"http://www.w3.org/2005/Atom link"`
		} `xml:"http://www.w3.org/2005/Atom entry"`
	}
	if err := xml.Unmarshal(data, &feed); err != nil {
		t.Fatalf("feed is not XML: %v\n%s", err, data)
	}
	isTime := func(s string) bool { _, err := time.Parse(time.RFC3339, s); return err == nil }
	isIRI := func(s string) bool {
		return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "urn:") || strings.HasPrefix(s, "tag:")
	}
	if !isIRI(feed.ID) || feed.Title == "" || !isTime(feed.Updated) || len(feed.Author) == 0 || feed.Author[0].Name == "" {
		t.Errorf("feed lacks a required element: id %q title %q updated %q authors %v", feed.ID, feed.Title, feed.Updated, feed.Author)
	}
	self := false
	for _, l := range feed.Links {
		self = self || l.Rel == "self" && l.Href != ""
	}
	if !self {
		t.Error("feed has no rel=self link")
	}
	if len(feed.Entries) != entries {
		t.Errorf("%d entries, want %d", len(feed.Entries), entries)
	}
	ids := map[string]bool{}
	for i, e := range feed.Entries {
		alt := false
		for _, l := range e.Links {
			alt = alt || (l.Rel == "alternate" || l.Rel == "") && l.Href != ""
		}
		if !isIRI(e.ID) || e.Title == "" || !isTime(e.Updated) || !alt || ids[e.ID] {
			t.Errorf("entry %d lacks a required element or repeats an id: %+v", i, e)
		}
		ids[e.ID] = true
	}
}
