package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/distributor-dev/distributor/internal/storage/registry"
)

const s3Site = `pipelines:
  - {id: p, source: ./bundle, destinations: [site]}
destinations:
  - id: site
    backend: s3
    path: www
    s3: {bucket: reports}
    links: {base_url: "https://r.example.com/"}
`

func TestDecodeWebFields(t *testing.T) {
	cfg, err := Decode([]byte(s3Site+`    publish:
      include: ["**"]
      exclude: ["drafts/**", "**/*.tmp"]
    headers:
      - match: "**/*.html"
        cache_control: no-cache
      - match: "**/*.{css,js,png,svg}"
        cache_control: "public, max-age=31536000, immutable"
      - match: "**/*.csv"
        content_type: "text/csv; charset=utf-8"
        content_disposition: attachment
    index:
      path: index.html
      title: Weather reports
      feed: feed.xml
      feed_entries: 5
`), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Destinations[0]
	if diff := cmp.Diff(Publish{HTML: true, Source: SourceAssets, Include: []string{"**"}, Exclude: []string{"drafts/**", "**/*.tmp"}}, d.Publish); diff != "" {
		t.Errorf("publish (-want +got):\n%s", diff)
	}
	want := []HeaderRule{
		{Match: "**/*.html", CacheControl: "no-cache", Line: 13},
		{Match: "**/*.{css,js,png,svg}", CacheControl: "public, max-age=31536000, immutable", Line: 15},
		{Match: "**/*.csv", ContentType: "text/csv; charset=utf-8", ContentDisposition: "attachment", Line: 17},
	}
	if diff := cmp.Diff(want, d.Headers); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&Index{Path: "index.html", Title: "Weather reports", Feed: "feed.xml", FeedEntries: 5, Line: 20}, d.Index); diff != "" {
		t.Errorf("index (-want +got):\n%s", diff)
	}

	// Defaults: no filters (every file), no rules, no index; a feed holds 20.
	cfg, err = Decode([]byte(s3Site+"    index: {path: archive/index.html, feed: archive/feed.xml}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Destinations[0]; d.Publish.Include != nil || d.Publish.Exclude != nil || d.Headers != nil || d.Index.FeedEntries != DefaultFeedEntries || d.Index.Title != "" {
		t.Errorf("defaults: %+v %+v %+v", d.Publish, d.Headers, d.Index)
	}
}

func TestDecodeWebErrors(t *testing.T) {
	// The backends that store headers, as the message lists them.
	_, meta := backendTitles(true)
	withHeaders := registry.List(meta, "or")
	local := strings.Replace(minimal, "    path: ./out\n", "    path: ./out\n    links: {base_url: \"https://r.example.com/\"}\n", 1) // extras start at line 10
	sftp := strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp: {host: h, user: u, known_hosts_file: kh}", 1)
	for _, tc := range []struct {
		name, yaml, field, msg string
		line                   int
	}{
		{"headers on local", local + "    headers: [{match: \"**\", cache_control: no-cache}]\n", "destinations[0].headers",
			"only allowed with backend: " + withHeaders + " (this destination's backend is local): local disk, SFTP and FTP store no response headers, the web server", 10},
		{"headers on sftp", sftp + "    headers:\n      - {match: \"**\", cache_control: no-cache}\n", "destinations[0].headers",
			"only allowed with backend: " + withHeaders + " (this destination's backend is sftp)", 10},
		{"rule without match", s3Site + "    headers: [{cache_control: no-cache}]\n", "destinations[0].headers[0].match", "is required", 9},
		{"rule sets nothing", s3Site + "    headers: [{match: \"*.html\"}]\n", "destinations[0].headers[0]", "sets nothing", 9},
		{"bad rule glob", s3Site + "    headers: [{match: \"*.{css\", cache_control: x}]\n", "destinations[0].headers[0].match", "malformed", 9},
		{"header with newline", s3Site + "    headers: [{match: \"*\", cache_control: \"a\\r\\nX-Evil: 1\"}]\n", "destinations[0].headers[0].cache_control", "control character", 9},
		{"unknown rule field", s3Site + "    headers: [{match: \"*\", cache: x}]\n", "destinations[0].headers[0]", `unknown field "cache"`, 9},
		{"bad include", local + "    publish: {include: [\"[a\"]}\n", "destinations[0].publish.include[0]", "malformed", 10},
		{"absolute exclude", local + "    publish: {exclude: [\"/drafts/**\"]}\n", "destinations[0].publish.exclude[0]", "must be relative", 10},
		{"exclude not a list", local + "    publish: {exclude: \"drafts/**\"}\n", "destinations[0].publish.exclude", "must be a list", 10},
		{"index without path", local + "    index: {title: x}\n", "destinations[0].index.path", "is required", 10},
		{"index path not html", local + "    index: {path: archive.txt}\n", "destinations[0].index.path", "must end with .html", 10},
		{"index path reserved", local + "    index: {path: .distributor-index.html}\n", "destinations[0].index.path", "not a clean", 10},
		{"index path placeholder", local + "    index: {path: \"{source_date}/index.html\"}\n", "destinations[0].index.path", "placeholder", 10},
		{"feed without base_url", minimal + "    index: {path: index.html, feed: feed.xml}\n", "destinations[0].index.feed", "needs absolute URLs: set links.base_url", 9},
		{"feed is index", local + "    index: {path: index.html, feed: index.html}\n", "destinations[0].index.feed", "also index.path", 10},
		{"feed_entries zero", local + "    index: {path: index.html, feed: feed.xml, feed_entries: 0}\n", "destinations[0].index.feed_entries", "between 1 and 1000", 10},
		{"feed_entries without feed", local + "    index: {path: index.html, feed_entries: 3}\n", "destinations[0].index.feed_entries", "only meaningful with index.feed", 10},
		{"two owners of one index", local + "    index: {path: index.html}\n  - id: e\n    backend: local\n    path: ./out\n    index: {path: index.html}\n",
			"destinations[1].index.path", `"index.html" at this root is already destination "d"'s index.path`, 14},
		{"feed of one is index of other", local + "    index: {path: index.html, feed: feed.xml}\n  - id: e\n    backend: local\n    path: ./out\n    links: {base_url: \"https://r.example.com/\"}\n    index: {path: feed.xml.html, feed: index.html}\n",
			"destinations[1].index.feed", `already destination "d"'s index.path`, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.yaml), "distributor.yaml")
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want a config error, got %v", err)
			}
			for _, p := range ce.Problems {
				if p.Line == tc.line && p.Field == tc.field && strings.Contains(p.Msg, tc.msg) {
					return
				}
			}
			t.Errorf("no problem at line %d, field %q, containing %q; got:\n%v", tc.line, tc.field, tc.msg, err)
		})
	}
	// Two destinations at different roots may use the same index path.
	if _, err := Decode([]byte(local+"    index: {path: index.html}\n  - id: e\n    backend: local\n    path: ./other\n    index: {path: index.html}\n"), "c.yaml"); err != nil {
		t.Errorf("index paths at different roots: %v", err)
	}
}

// TestDecodeLinksMissing: links.missing is warn unless set, with or
// without base_url.
func TestDecodeLinksMissing(t *testing.T) {
	for doc, want := range map[string]Links{
		minimal:                                  {Missing: MissingWarn},
		minimal + "    links: {missing: fail}\n": {Missing: MissingFail},
		minimal + "    links: {base_url: \"https://r.example.com\", missing: warn}\n": {BaseURL: "https://r.example.com/", Missing: MissingWarn},
	} {
		cfg, err := Decode([]byte(doc), "c.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Destinations[0].Links; got != want {
			t.Errorf("links %+v, want %+v\n%s", got, want, doc)
		}
	}
}
