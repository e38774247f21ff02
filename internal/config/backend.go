package config

import (
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"go.yaml.in/yaml/v3"
)

// What a destination's backend decides, through the storage.Backend the
// registry lists under its name: how its path is read, and its block.

// backendBlocks checks each backend's block is present exactly with its
// backend and decodes it into dst.Settings (others only for their problems).
func (d *decoder) backendBlocks(o *object, dst *Destination, backendNode *yaml.Node) {
	for _, b := range registry.All() {
		if len(b.Fields) == 0 {
			continue
		}
		name := b.Name
		_, present := o.fields[name]
		f := join(o.path, name)
		switch {
		case dst.Backend == name && !present:
			d.add(backendNode.Line, f, "backend %s needs an %s block (with %s)", name, name, b.Needs)
		case dst.Backend != "" && dst.Backend != name && present:
			d.add(o.keyLine(name), f, "only allowed with backend: %s (this destination's backend is %s)", name, dst.Backend)
		case !present:
		case d.value(o, name) == nil:
			if dst.Backend == name {
				d.add(o.keyLine(name), f, "is empty (it needs %s)", b.Needs)
			}
		default:
			if bo := d.sub(o, name, b.Fields, nil); bo != nil {
				settings := b.Decode(&block{d: d, o: bo, name: name, dst: dst})
				if dst.Backend == name {
					dst.Settings = settings
				}
			}
		}
	}
}

// destinationPath checks and resolves dst's path as be (when known) reads it.
func (d *decoder) destinationPath(o *object, dst *Destination, be storage.Backend, known bool) {
	f := join(o.path, "path")
	needed := known && be.Path != storage.PathKey
	s, v, ok := d.str(o, "path", needed)
	if !ok || !d.template(s, v, f) {
		return
	}
	switch {
	case !known:
		dst.Path = s // backend invalid: already reported
	case be.Path == storage.PathLocal:
		dst.Path, _ = d.localPath(s, v, f)
	case be.Path == storage.PathServer && s == "":
		d.add(v.Line, f, "must not be empty")
	case be.Path == storage.PathServer && !strings.HasPrefix(s, "/"):
		d.add(v.Line, f, "%q must be an absolute path on the server (starting with /)", s)
	case be.Path == storage.PathServer && strings.ContainsAny(s, "\\\x00"):
		d.add(v.Line, f, "%q must not contain a backslash or NUL byte", s)
	case be.Path == storage.PathServer:
		dst.Path = path.Clean(s)
	case strings.HasPrefix(s, "/"): // PathKey from here on
		d.add(v.Line, f, "%q must be a key prefix without a leading /", s)
	default:
		s = strings.TrimSuffix(s, "/")
		if err := cleanpath.Check(s); s != "" && err != nil {
			d.add(v.Line, f, "key prefix %q is not clean: %s", s, reason(err))
			return
		}
		dst.Path = s
	}
}

// block is a backend's block as its Decode reads it (storage.Block).
type block struct {
	d    *decoder
	o    *object
	name string       // the backend's
	dst  *Destination // receives the block's LocalFiles
}

func (b *block) String(name string, required bool) (string, bool) {
	s, _, ok := b.d.str(b.o, name, required)
	return s, ok
}

func (b *block) Bool(name string, def bool) bool { return b.d.boolean(b.o, name, def) }

func (b *block) Int(name string) (int64, bool) {
	n, _, ok := b.d.integer(b.o, name)
	return n, ok
}

func (b *block) Duration(name string) time.Duration { return b.d.duration(b.o, name, false) }

func (b *block) LocalPath(name, s string) string {
	v, f := b.d.value(b.o, name), join(b.o.path, name)
	if v == nil || !b.d.noPlaceholder(s, v, f) {
		return ""
	}
	p, ok := b.d.localPath(s, v, f)
	if ok {
		b.dst.LocalFiles = append(b.dst.LocalFiles, LocalFile{Field: b.name + "." + name, Path: p})
	}
	return p
}

func (b *block) URL(name, s string) (*url.URL, bool) {
	u, err := httpURL(s)
	if err != nil {
		b.Errorf(name, "%v", err)
	}
	return u, err == nil
}

func (b *block) Has(name string) bool { return b.d.value(b.o, name) != nil }

func (b *block) Require(name, why string) { b.d.required(b.o, name, why) }

func (b *block) Errorf(name, format string, args ...any) {
	line := b.o.keyLine(name)
	if v := b.d.value(b.o, name); v != nil {
		line = v.Line
	}
	b.d.add(line, join(b.o.path, name), format, args...)
}

// backendTitles returns the backends whose stores keep metadata (or not).
func backendTitles(meta bool) (titles, names []string) {
	for _, b := range registry.All() {
		if b.Properties.Metadata == meta {
			titles, names = append(titles, b.Title), append(names, b.Name)
		}
	}
	return titles, names
}
