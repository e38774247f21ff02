package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/glob"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

// The destinations and the blocks every backend shares.

func destinationHint(name string) string {
	if slices.Contains(legacyDestinationFields, name) {
		return fmt.Sprintf("field %q is no longer supported: ownership is recorded in the catalog; use workflow: additive or workflow: replacement", name)
	}
	return misplacedHint(misplacedDestinationFields(), name)
}

// misplacedHint says which blocks a field written one level too high belongs in, or "".
func misplacedHint(misplaced map[string]string, name string) string {
	if block, ok := misplaced[name]; ok {
		blocks := strings.Split(block, "|")
		fields := make([]string, len(blocks))
		for i, b := range blocks {
			fields[i] = b + "." + name
		}
		return fmt.Sprintf("unknown field %q; it belongs in the %s block (%s)", name,
			registry.List(blocks, "or"), registry.List(fields, "or"))
	}
	return ""
}

func (d *decoder) destination(n *yaml.Node, field string, seen map[string]int) (Destination, bool) {
	o := d.object(n, field, destinationFields(), destinationHint)
	if o == nil {
		return Destination{}, false
	}
	dst := Destination{Line: n.Line, ID: d.id(o, seen, "destination")}

	backend, backendNode, ok := d.str(o, "backend", false)
	if backendNode == nil {
		d.required(o, "backend", registry.List(registry.Names(), "or"))
	}
	if ok && slices.Contains(registry.Unlinked(), backend) {
		d.add(backendNode.Line, join(field, "backend"), "backend %s is not linked into this program: import _ %q (linked: %s)",
			backend, "github.com/distributor-dev/distributor/backend/"+backend, strings.Join(registry.Names(), ", "))
	} else if ok && d.oneOf(backend, backendNode, join(field, "backend"), registry.Names()) {
		dst.Backend = backend
	}
	be, known := registry.Lookup(dst.Backend)

	d.destinationPath(o, &dst, be, known)
	dst.Workflow = d.enum(o, "workflow", workflows, WorkflowAdditive)

	if n, v, ok := d.integer(o, "max_deletes"); ok {
		if n < 0 {
			d.add(v.Line, join(field, "max_deletes"), "must be 0 or more, not %d", n)
		} else {
			m := int(n)
			dst.MaxDeletes = &m
		}
	}

	dst.SingleWriter = d.boolean(o, "single_writer", false)

	dst.Publish = Publish{HTML: true, Source: SourceAssets}
	if po := d.sub(o, "publish", publishFields, nil); po != nil {
		dst.Publish.HTML = d.boolean(po, "html", true)
		dst.Publish.Source = d.enum(po, "source", sources, SourceAssets)
		if _, ok := po.fields["include"]; ok {
			dst.Publish.Include = d.globs(po, "include")
		}
		dst.Publish.Exclude = d.globs(po, "exclude")
	}

	if po := d.sub(o, "paths", pathsFields, nil); po != nil {
		dst.Paths = d.paths(po)
	}

	if mo := d.sub(o, "markdown", markdownFields, nil); mo != nil {
		if s, v, ok := d.str(mo, "template", false); ok && s != "" && d.noPlaceholder(s, v, join(mo.path, "template")) {
			dst.Markdown.Template, _ = d.localPath(s, v, join(mo.path, "template"))
		}
		dst.Markdown.RawHTML = d.boolean(mo, "raw_html", false)
	}

	dst.Links = d.links(o)
	dst.Headers = d.headers(o, be, known)
	dst.Index = d.index(o, dst.Links)
	dst.Compress = d.compress(o)

	if ro := d.sub(o, "retention", retentionFields, nil); ro != nil {
		dst.Retention = &Retention{}
		if po := d.sub(ro, "prune", pruneFields, nil); po != nil {
			dst.Retention.Prune = d.prune(po)
		}
	}

	d.backendBlocks(o, &dst, backendNode)
	return dst, true
}

func (d *decoder) links(o *object) Links {
	l := Links{Missing: MissingWarn}
	lo := d.sub(o, "links", linksFields, nil)
	if lo == nil {
		return l
	}
	if s, v, ok := d.str(lo, "base_url", false); ok && s != "" {
		f := join(lo.path, "base_url")
		if u, err := httpURL(s); err != nil {
			d.add(v.Line, f, "%v", err)
		} else if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
			d.add(v.Line, f, "%q must not have a query or fragment", s)
		} else if u.User != nil {
			d.add(v.Line, f, "%q must not contain credentials", s)
		} else if d.noPlaceholder(s, v, f) {
			if !strings.HasSuffix(s, "/") {
				s += "/"
			}
			l.BaseURL = s
		}
	}
	l.Pretty = d.boolean(lo, "pretty", false)
	l.Missing = d.enum(lo, "missing", missingModes, MissingWarn)
	return l
}

func (d *decoder) paths(o *object) Paths {
	var p Paths
	if s, v, ok := d.str(o, "prefix", false); ok && s != "" {
		f := join(o.path, "prefix")
		if d.template(s, v, f) {
			// A clean name appended must stay clean: checking with "x"
			// covers every rule but the reserved names (planning checks them).
			if !strings.HasSuffix(s, "/") {
				// "tomorrow" silently producing "tomorrowindex.html"
				// surprises everyone.
				d.add(v.Line, f, "%q must end with \"/\" (it names a folder: write %q)", s, s+"/")
			} else if err := cleanpath.CheckUnreserved(s + "x"); err != nil {
				d.add(v.Line, f, "%q would make unclean output paths (%q %s)", s, s+"x", reason(err))
			} else {
				p.Prefix = s
			}
		}
	}
	n := d.value(o, "rename")
	if n == nil {
		return p
	}
	f := join(o.path, "rename")
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, f, "must be a mapping of source path to output path, not %s", describe(n))
		return p
	}
	keys := map[string]int{}
	targets := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i]), d.resolve(n.Content[i+1])
		if k == nil || v == nil {
			return p
		}
		if k.Kind != yaml.ScalarNode || isNull(k) {
			d.add(k.Line, f, "keys must be source paths, not %s", describe(k))
			continue
		}
		ef := fmt.Sprintf("%s[%q]", f, k.Value)
		if first, dup := keys[k.Value]; dup {
			d.add(k.Line, ef, "source path renamed twice (first at line %d)", first)
			continue
		}
		keys[k.Value] = k.Line
		okKey := true
		if err := cleanpath.CheckUnreserved(k.Value); err != nil {
			d.add(k.Line, ef, "source path %q is not clean: %s", k.Value, reason(err))
			okKey = false
		}
		if v.Kind != yaml.ScalarNode || isNull(v) {
			d.add(v.Line, ef, "must be an output path, not %s", describe(v))
			continue
		}
		if err := cleanpath.CheckUnreserved(v.Value); err != nil {
			d.add(v.Line, ef, "output path %q is not clean: %s", v.Value, reason(err))
			continue
		}
		if !d.noPlaceholder(k.Value, k, ef) || !d.noPlaceholder(v.Value, v, ef) {
			continue
		}
		if first, dup := targets[v.Value]; dup {
			d.add(v.Line, ef, "output path %q is already the target of another rename (line %d)", v.Value, first)
			continue
		}
		targets[v.Value] = v.Line
		if okKey {
			if p.Rename == nil {
				p.Rename, p.RenameLines = map[string]string{}, map[string]int{}
			}
			p.Rename[k.Value] = v.Value
			p.RenameLines[k.Value] = k.Line
		}
	}
	return p
}

func (d *decoder) prune(o *object) *Prune {
	p := &Prune{OlderThan: d.duration(o, "older_than", true)}
	if k, v, ok := d.integer(o, "keep_min"); ok {
		if k < 0 {
			d.add(v.Line, join(o.path, "keep_min"), "must be 0 or more, not %d", k)
		} else if k > 1<<31-1 {
			d.add(v.Line, join(o.path, "keep_min"), "%d is too large", k)
		} else {
			p.KeepMin = int(k)
		}
	}
	return p
}

var (
	compressFields = []string{"encodings", "match", "min_size"}
	encodings      = []string{"br", "gzip", "zstd"}
)

// compress decodes a destination's compress block (spec 3.4); nil without one.
func (d *decoder) compress(o *object) *Compress {
	co := d.sub(o, "compress", compressFields, nil)
	if co == nil {
		return nil
	}
	c := &Compress{Line: co.line, Match: DefaultCompressMatch, MinSize: DefaultCompressMinSize}
	c.Encodings = d.distinct(co, "encodings", "encoding", "a list of encodings: br, gzip, zstd",
		"at least one encoding is required (br, gzip, zstd); leave the compress block out to publish plain outputs only",
		func(e string, it *yaml.Node, f string) bool { return d.oneOf(e, it, f, encodings) })
	if _, ok := co.fields["match"]; ok {
		c.Match = d.globs(co, "match")
	}
	if n, v, ok := d.integer(co, "min_size"); ok {
		if n < 0 {
			d.add(v.Line, join(co.path, "min_size"), "must be 0 or more, not %d", n)
		}
		c.MinSize = max(n, 0)
	}
	return c
}

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
