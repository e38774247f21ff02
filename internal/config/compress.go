package config

import "go.yaml.in/yaml/v3"

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
