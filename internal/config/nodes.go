package config

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

type entry struct{ key, val *yaml.Node }

// object is a YAML mapping whose keys were checked against the known fields.
type object struct {
	path      string
	line      int // its parent key's line for a nested block
	fields    map[string]entry
	suggested map[string]bool // offered for a misspelled field: not reported again as required
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// describe names a node's YAML type for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		case "!!int", "!!float":
			return "a number (" + n.Value + ")"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return fmt.Sprintf("the string %q", v)
	}
	return "an unexpected YAML node"
}

// object indexes the fields of mapping n (nil when n is not one), reporting bad,
// merge, repeated and unknown keys; hint may word an unknown name's message.
func (d *decoder) object(n *yaml.Node, field string, known []string, hint func(string) string) *object {
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, field, "must be a mapping, not %s", describe(n))
		return nil
	}
	o := &object{path: field, line: n.Line, fields: map[string]entry{}, suggested: map[string]bool{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.resolve(n.Content[i])
		if k == nil {
			return o
		}
		if k.Kind != yaml.ScalarNode {
			d.add(k.Line, field, "keys must be field names, not %s", describe(k))
			continue
		}
		name := k.Value
		if name == "<<" && k.Tag != "!!str" {
			d.add(k.Line, field, "merge keys (<<) are not supported; write the fields out")
			continue
		}
		if !slices.Contains(known, name) {
			msg := ""
			if hint != nil {
				msg = hint(name)
			}
			if msg == "" {
				msg = fmt.Sprintf("unknown field %q", name)
				if s := Closest(name, known); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
					o.suggested[s] = true
				}
			}
			d.add(k.Line, field, "%s", msg)
			continue
		}
		if prev, dup := o.fields[name]; dup {
			d.add(k.Line, join(field, name), "set twice (first at line %d)", prev.key.Line)
			continue
		}
		o.fields[name] = entry{key: k, val: n.Content[i+1]}
	}
	return o
}

// value returns the value of field name, or nil when it is absent or null.
func (d *decoder) value(o *object, name string) *yaml.Node {
	if o == nil {
		return nil
	}
	e, ok := o.fields[name]
	if !ok {
		return nil
	}
	v := d.resolve(e.val)
	if v == nil || isNull(v) {
		return nil
	}
	return v
}

// keyLine is the line of field name's key, or of the object itself.
func (o *object) keyLine(name string) int {
	if e, ok := o.fields[name]; ok {
		return e.key.Line
	}
	return o.line
}

func (d *decoder) required(o *object, name, what string) {
	if o.suggested[name] {
		return // already reported as a misspelling
	}
	msg := "is required"
	if what != "" {
		msg += " (" + what + ")"
	}
	d.add(o.line, join(o.path, name), "%s", msg)
}

// str returns field name as written (any scalar); n is nil when absent or
// null (reported when required); ok is false unless n is a scalar.
func (d *decoder) str(o *object, name string, required bool) (s string, n *yaml.Node, ok bool) {
	if n = d.value(o, name); n == nil {
		if required && o != nil {
			d.required(o, name, "")
		}
		return "", nil, false
	}
	if n.Kind != yaml.ScalarNode {
		d.add(n.Line, join(o.path, name), "must be a string, not %s", describe(n))
		return "", n, false
	}
	return n.Value, n, true
}

// boolean returns field name as a boolean, def when absent.
func (d *decoder) boolean(o *object, name string, def bool) bool {
	n := d.value(o, name)
	if n == nil {
		return def
	}
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		d.add(n.Line, join(o.path, name), "must be true or false, not %s", describe(n))
		return def
	}
	return b
}

// integer returns field name as an integer; n is nil when absent.
func (d *decoder) integer(o *object, name string) (v int64, n *yaml.Node, ok bool) {
	n = d.value(o, name)
	if n == nil {
		return 0, nil, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.add(n.Line, join(o.path, name), "must be a whole number, not %s", describe(n))
		return 0, n, false
	}
	if err := n.Decode(&v); err != nil {
		d.add(n.Line, join(o.path, name), "%s is out of range", n.Value)
		return 0, n, false
	}
	return v, n, true
}

// list returns field name's items (aliases resolved); n is nil when absent or null.
func (d *decoder) list(o *object, name string) (items []*yaml.Node, n *yaml.Node, ok bool) {
	if n = d.value(o, name); n == nil {
		return nil, nil, false
	}
	if n.Kind != yaml.SequenceNode {
		msg := fmt.Sprintf("must be a list, not %s", describe(n))
		if n.Kind == yaml.ScalarNode {
			msg += fmt.Sprintf(" (write [%s])", n.Value)
		}
		d.add(n.Line, join(o.path, name), "%s", msg)
		return nil, n, false
	}
	for _, c := range n.Content {
		if c = d.resolve(c); c != nil {
			items = append(items, c)
		}
	}
	return items, n, true
}

// sub decodes the nested mapping in field name, or returns nil.
func (d *decoder) sub(o *object, name string, known []string, hint func(string) string) *object {
	n := d.value(o, name)
	if n == nil {
		return nil
	}
	so := d.object(n, join(o.path, name), known, hint)
	if so != nil {
		so.line = o.keyLine(name)
	}
	return so
}

func (d *decoder) itemString(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.add(n.Line, field, "must be a string, not %s", describe(n))
		return "", false
	}
	return n.Value, true
}
