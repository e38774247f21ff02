package config

import (
	"fmt"
	"strings"

	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/glob"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

// The web-publishing fields of a destination (spec 3.1).

var (
	headerRuleFields = []string{"match", "cache_control", "content_type", "content_disposition"}
	indexFields      = []string{"path", "title", "feed", "feed_entries"}
)

// maxFeedEntries bounds index.feed_entries: a feed is read by every
// subscriber's poller, so it stays small.
const maxFeedEntries = 1000

func (d *decoder) globs(o *object, name string) []string {
	items, _, ok := d.list(o, name)
	if !ok {
		return nil
	}
	out := []string{}
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", join(o.path, name), i)
		s, ok := d.itemString(it, f)
		if !ok {
			continue
		}
		if err := glob.Validate(s); err != nil {
			d.add(it.Line, f, "%v", err)
			continue
		}
		out = append(out, s)
	}
	return out
}

// headerValue checks one response-metadata value: HTTP header field
// content, so no control character (a CR or LF would split the header).
func (d *decoder) headerValue(o *object, name string) string {
	s, v, ok := d.str(o, name, false)
	if !ok {
		return ""
	}
	f := join(o.path, name)
	if strings.TrimSpace(s) == "" {
		d.add(v.Line, f, "must not be empty (leave the field out to keep the default)")
		return ""
	}
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) >= 0 {
		d.add(v.Line, f, "%q contains a control character, which is not allowed in an HTTP header", s)
		return ""
	}
	return s
}

// headers decodes a destination's headers list for backend be (when known).
func (d *decoder) headers(o *object, be storage.Backend, known bool) []HeaderRule {
	items, n, ok := d.list(o, "headers")
	if n == nil {
		return nil
	}
	f := join(o.path, "headers")
	if known && !be.Properties.Metadata {
		_, metaNames := backendTitles(true)
		otherTitles, _ := backendTitles(false)
		d.add(o.keyLine("headers"), f, "only allowed with backend: %s (this destination's backend is %s): "+
			"%s store no response headers, the web server serving the root decides them (configure Cache-Control and friends there)",
			registry.List(metaNames, "or"), be.Name, registry.List(otherTitles, "and"))
		return nil
	}
	if !ok {
		return nil
	}
	var rules []HeaderRule
	for i, it := range items {
		rf := fmt.Sprintf("%s[%d]", f, i)
		ro := d.object(it, rf, headerRuleFields, nil)
		if ro == nil {
			continue
		}
		r := HeaderRule{Line: it.Line}
		if s, v, ok := d.str(ro, "match", true); ok {
			if err := glob.Validate(s); err != nil {
				d.add(v.Line, join(rf, "match"), "%v", err)
			} else {
				r.Match = s
			}
		}
		r.CacheControl = d.headerValue(ro, "cache_control")
		r.ContentType = d.headerValue(ro, "content_type")
		r.ContentDisposition = d.headerValue(ro, "content_disposition")
		if r.CacheControl == "" && r.ContentType == "" && r.ContentDisposition == "" && len(ro.fields) <= 1 {
			d.add(it.Line, rf, "sets nothing: give cache_control, content_type or content_disposition")
		}
		if r.Match != "" {
			rules = append(rules, r)
		}
	}
	return rules
}

// index decodes a destination's index block (a feed needs links.base_url).
func (d *decoder) index(o *object, links Links) *Index {
	xo := d.sub(o, "index", indexFields, nil)
	if xo == nil {
		return nil
	}
	x := &Index{Line: xo.line, FeedEntries: DefaultFeedEntries}
	rootPath := func(name string) string {
		s, v, ok := d.str(xo, name, name == "path")
		if !ok {
			return ""
		}
		f := join(xo.path, name)
		if !d.noPlaceholder(s, v, f) {
			return ""
		}
		if err := cleanpath.CheckUnreserved(s); err != nil {
			d.add(v.Line, f, "%q is not a clean root-relative output path: %s", s, reason(err))
			return ""
		}
		return s
	}
	x.Path = rootPath("path")
	if x.Path != "" && !strings.HasSuffix(strings.ToLower(x.Path), ".html") {
		d.add(xo.line, join(xo.path, "path"), "%q must end with .html (the index is an HTML page)", x.Path)
	}
	if s, v, ok := d.str(xo, "title", false); ok {
		if strings.TrimSpace(s) == "" {
			d.add(v.Line, join(xo.path, "title"), "must not be empty (leave it out to use the destination id)")
		}
		x.Title = s
	}
	if x.Feed = rootPath("feed"); x.Feed != "" {
		if x.Feed == x.Path {
			d.add(xo.keyLine("feed"), join(xo.path, "feed"), "%q is also index.path: the page and the feed need their own paths", x.Feed)
		}
		if links.BaseURL == "" {
			d.add(xo.keyLine("feed"), join(xo.path, "feed"), "an Atom feed needs absolute URLs: set links.base_url")
		}
	}
	if n, v, ok := d.integer(xo, "feed_entries"); ok {
		switch {
		case n < 1 || n > maxFeedEntries:
			d.add(v.Line, join(xo.path, "feed_entries"), "must be between 1 and %d, not %d", maxFeedEntries, n)
		case x.Feed == "":
			d.add(v.Line, join(xo.path, "feed_entries"), "only meaningful with index.feed")
		default:
			x.FeedEntries = int(n)
		}
	}
	return x
}

// Location names where dst's root lives ("" on local disk): destinations
// with the same Location and path share a root.
func Location(dst *Destination) string {
	if b, ok := registry.Lookup(dst.Backend); ok && b.Location != nil {
		return b.Location(dst.Settings)
	}
	return ""
}

// indexOwners rejects two destinations sharing a root and an index or feed
// path: each run would replace the other's listing with its own.
func (d *decoder) indexOwners(dsts []Destination) {
	type claim struct{ id, field string }
	claims := map[string]claim{}
	for i := range dsts {
		dst := &dsts[i]
		if dst.Index == nil || dst.ID == "" {
			continue
		}
		for _, c := range []struct{ field, path string }{{"index.path", dst.Index.Path}, {"index.feed", dst.Index.Feed}} {
			if c.path == "" {
				continue
			}
			// The root as far as configuration can tell (a templated path is compared as written).
			key := dst.Backend + "\x00" + dst.Path + "\x00" + Location(dst) + "\x00" + c.path
			if prev, ok := claims[key]; ok && prev.id != dst.ID {
				d.add(dst.Index.Line, fmt.Sprintf("destinations[%d].%s", i, c.field),
					"%q at this root is already destination %q's %s: two destinations sharing a root need their own index and feed paths",
					c.path, prev.id, prev.field)
				continue
			}
			claims[key] = claim{dst.ID, c.field}
		}
	}
}
