package render

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"html/template"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/config"
)

// Transforms of a destination's archive index page and Atom feed.
const (
	TransformIndex = "index"
	TransformFeed  = "feed"
)

// IndexRecord is what the archive index needs of one output at a root.
type IndexRecord struct {
	Path          string
	PipelineID    string
	DestinationID string
	Kind          string
	Transform     string
	Source        PageSource
}

// IndexEntry is one report of the archive and its primary page.
type IndexEntry struct {
	Source PageSource
	// Path is the primary page's output path; URL its public URL (for the feed); Href a link relative
	// to the index page, so that a copy of the root (a preview, a mirror) links within itself.
	Path, URL, Href string
}

// IndexEntries lists the reports of destination d among recs, one per source identity, newest first.
// An entry's page is the generated "index.html" with the fewest segments, else the first generated
// output, else the first output. d.Index must be set.
func IndexEntries(d *config.Destination, recs []IndexRecord) []IndexEntry {
	type group struct {
		src  PageSource
		best *IndexRecord
	}
	rank := func(r *IndexRecord) int { // lower is a better primary page
		switch {
		case r.Kind == KindGenerated && path.Base(r.Path) == "index.html":
			return strings.Count(r.Path, "/")
		case r.Kind == KindGenerated:
			return math.MaxInt - 1
		}
		return math.MaxInt
	}
	better := func(a, b *IndexRecord) bool {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a.Path, b.Path)) < 0
	}
	groups := map[string]*group{}
	for i := range recs {
		r := &recs[i]
		if r.DestinationID != d.ID || (r.Transform != "" && r.Transform != TransformMarkdown) { // an index, feed or sidecar
			continue
		}
		key := r.Source.ID + "\x00" + r.Source.Digest + "\x00" + r.Source.Created.UTC().Format(time.RFC3339Nano)
		g := groups[key]
		if g == nil {
			g = &group{src: r.Source}
			groups[key] = g
		}
		if g.best == nil || better(r, g.best) {
			g.best = r
		}
	}
	out := make([]IndexEntry, 0, len(groups))
	dir := path.Dir(d.Index.Path)
	for _, g := range groups {
		out = append(out, IndexEntry{Source: g.src, Path: g.best.Path, URL: outputURL(d.Links, g.best.Path),
			Href: relativeHref(dir, g.best.Path, d.Links.Pretty)})
	}
	slices.SortFunc(out, func(a, b IndexEntry) int {
		if c := b.Source.Created.Compare(a.Source.Created); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Source.ID, b.Source.ID), strings.Compare(a.Source.Digest, b.Source.Digest))
	})
	return out
}

// relativeHref is the escaped link from dir ("." the root) to p (with pretty, ".../index.html" to its directory).
func relativeHref(dir, p string, pretty bool) string {
	var from []string
	if dir != "." {
		from = strings.Split(dir, "/")
	}
	to := strings.Split(p, "/")
	i := 0
	for i < len(from) && i < len(to)-1 && from[i] == to[i] {
		i++
	}
	parts := slices.Repeat([]string{".."}, len(from)-i)
	for _, s := range to[i:] {
		parts = append(parts, escapeSegment(s))
	}
	if pretty && parts[len(parts)-1] == "index.html" {
		parts[len(parts)-1] = ""
		if len(parts) == 1 {
			return "./"
		}
	}
	return strings.Join(parts, "/")
}

var indexFragment = template.Must(template.New("index").Parse(`<h1>{{.Title}}</h1>
{{if .Entries}}<p>{{len .Entries}} report{{if ne (len .Entries) 1}}s{{end}}, newest first.{{if .Feed}} <a href="{{.Feed}}" type="application/atom+xml">Atom feed</a>{{end}}</p>
<ol class="archive" reversed>
{{range .Entries}}<li><a href="{{.Href}}">{{.Source.ID}}</a> <time datetime="{{.Source.Created.UTC.Format "2006-01-02T15:04:05Z07:00"}}">{{.Source.Created.UTC.Format "2006-01-02 15:04 UTC"}}</time></li>
{{end}}</ol>
{{else}}<p>No reports yet.</p>
{{end}}`))

// Index renders d's archive index page and, with index.feed, its Atom feed, as pure functions of
// entries and d. The page links relatively; the feed uses absolute URLs, as Atom requires.
func Index(d *config.Destination, entries []IndexEntry) ([]Output, error) {
	if d.Index == nil {
		return nil, nil
	}
	title := cmp.Or(d.Index.Title, d.ID)
	feedHref := ""
	if d.Index.Feed != "" {
		feedHref = relativeHref(path.Dir(d.Index.Path), d.Index.Feed, false)
	}
	var frag bytes.Buffer
	if err := indexFragment.Execute(&frag, struct {
		Title   string
		Feed    string
		Entries []IndexEntry
	}{title, feedHref, entries}); err != nil {
		return nil, fmt.Errorf("index %s: %w", d.Index.Path, err)
	}
	page, err := loadTemplate(d.Markdown.Template)
	if err != nil {
		return nil, err
	}
	var src PageSource
	idx := &PageIndex{Entries: entries}
	if len(entries) > 0 {
		src = entries[0].Source
		idx.Newest, idx.Oldest = entries[0].Source.Created, entries[len(entries)-1].Source.Created
	}
	var buf bytes.Buffer
	if err := page.Execute(&buf, PageData{Title: title, Content: template.HTML(frag.String()), Source: src, Path: d.Index.Path, Index: idx}); err != nil {
		return nil, fmt.Errorf("index %s: page template: %w", d.Index.Path, err)
	}
	outs := []Output{generatedOutput(d, d.Index.Path, TransformIndex, buf.Bytes())}
	if d.Index.Feed != "" {
		feed, err := atomFeed(d, title, entries)
		if err != nil {
			return nil, err
		}
		outs = append(outs, generatedOutput(d, d.Index.Feed, TransformFeed, feed))
	}
	return outs, nil
}

func generatedOutput(d *config.Destination, p, transform string, content []byte) Output {
	return Output{Path: p, Kind: KindGenerated, Transform: transform, Content: content,
		SHA256: sha256Digest(content), Size: int64(len(content)), URL: outputURL(d.Links, p)}
}

// Atom 1.0 (RFC 4287) documents.
type (
	atomFeedDoc struct {
		XMLName   xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
		ID        string      `xml:"id"`
		Title     string      `xml:"title"`
		Updated   string      `xml:"updated"`
		Author    atomPerson  `xml:"author"`
		Links     []atomLink  `xml:"link"`
		Generator string      `xml:"generator"`
		Entries   []atomEntry `xml:"entry"`
	}
	atomPerson struct {
		Name string `xml:"name"`
	}
	atomLink struct {
		Rel  string `xml:"rel,attr"`
		Type string `xml:"type,attr,omitempty"`
		Href string `xml:"href,attr"`
	}
	atomEntry struct {
		ID      string     `xml:"id"`
		Title   string     `xml:"title"`
		Updated string     `xml:"updated"`
		Links   []atomLink `xml:"link"`
		Summary string     `xml:"summary"`
	}
)

// atomFeed renders the Atom feed of the newest index.feed_entries entries; updated is
// the newest report's created time, so an unchanged archive gives the same bytes.
func atomFeed(d *config.Destination, title string, entries []IndexEntry) ([]byte, error) {
	if d.Links.BaseURL == "" {
		return nil, fmt.Errorf("index.feed %s needs links.base_url", d.Index.Feed)
	}
	self := outputURL(d.Links, d.Index.Feed)
	doc := atomFeedDoc{ID: self, Title: title, Author: atomPerson{Name: title}, Generator: "distributor",
		Links: []atomLink{{Rel: "self", Type: "application/atom+xml", Href: self},
			{Rel: "alternate", Type: "text/html", Href: outputURL(d.Links, d.Index.Path)}}}
	updated := time.Unix(0, 0).UTC()
	if len(entries) > 0 {
		updated = entries[0].Source.Created.UTC()
	}
	doc.Updated = updated.Format(time.RFC3339)
	n := cmp.Or(max(d.Index.FeedEntries, 0), config.DefaultFeedEntries)
	for _, e := range entries[:min(n, len(entries))] {
		doc.Entries = append(doc.Entries, atomEntry{ID: e.URL, Title: e.Source.ID, Updated: e.Source.Created.UTC().Format(time.RFC3339),
			Links:   []atomLink{{Rel: "alternate", Type: "text/html", Href: e.URL}},
			Summary: fmt.Sprintf("%s, created %s (%s)", e.Source.ID, e.Source.Created.UTC().Format("2006-01-02 15:04 UTC"), e.Source.Digest)})
	}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("index.feed %s: %w", d.Index.Feed, err)
	}
	return append(append([]byte(xml.Header), out...), '\n'), nil
}
