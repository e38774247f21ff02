// Package blocktest helps a backend's tests with its block struct (see
// storage.DecodeBlock): CheckSchema keeps the backend's schema.json in step
// with the struct (and rewrites it with -update), Map is a storage.Block of
// plain values.
package blocktest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
)

var update = flag.Bool("update", false, "rewrite the backend's schema.json from its block struct")

// The patterns that a member's kind implies.
const (
	durationPattern = `^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$`
	filePattern     = `^[^{}]*$`
	urlPattern      = `^https?://[^\s/?#@]+(/[^\s?#]*)?$`
)

// CheckSchema checks that schema, the text of the backend's schema.json
// (in the test's directory), says what block struct v, declared in the Go
// file src (also there), says: the same members in the same order, their
// types, patterns, limits and defaults, and the same required list. The
// file keeps the descriptions, but a field's doc comment, if it has one,
// is its member's; and the order of each object's keys, as `config
// schema` prints them. With -update it rewrites the file.
func CheckSchema(t *testing.T, v any, schema, src string) {
	t.Helper()
	want, err := Generate(v, src, []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	if compact(t, want) == compact(t, []byte(schema)) {
		return
	}
	if *update {
		if err := os.WriteFile("schema.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("schema.json does not say what %T says (go test -update rewrites it); it should be\n%s", v, want)
}

// Generate returns the schema of block struct v, declared in the Go file
// src, with the descriptions (where a field has no doc comment) and key
// orders of old (a schema or nil).
func Generate(v any, src string, old []byte) ([]byte, error) {
	docs, err := fieldDocs(src, reflect.TypeOf(v).Name())
	if err != nil {
		return nil, err
	}
	var top struct {
		Description string                     `json:"description"`
		Properties  map[string]json.RawMessage `json:"properties"`
	}
	if len(old) > 0 {
		if err := json.Unmarshal(old, &top); err != nil {
			return nil, fmt.Errorf("the old schema: %w", err)
		}
	}
	required := []string{}
	var props object
	for f := range reflect.TypeOf(v).Fields() {
		name, flags, _ := strings.Cut(f.Tag.Get("block"), ",")
		if name == "" {
			continue
		}
		if strings.Contains(","+flags+",", ",required,") {
			required = append(required, name)
		}
		var oldProp struct{ Description string }
		_ = json.Unmarshal(top.Properties[name], &oldProp)
		p, err := property(f, ","+flags+",", cmp.Or(docs[f.Name], oldProp.Description))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		props = append(props, member{name, p.orderedAs(top.Properties[name])})
	}
	doc := object{{"description", top.Description}, {"type", "object"}, {"additionalProperties", false},
		{"required", required}, {"properties", props}}
	if len(old) > 0 {
		doc = doc.orderedAs(old)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(encode(doc)), "", "  "); err != nil {
		return nil, fmt.Errorf("the generated schema: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// property is the schema of field f (flags: its block tag's, within
// commas), described by doc.
func property(f reflect.StructField, flags, doc string) (object, error) {
	if doc == "" {
		return nil, fmt.Errorf("field %s needs a doc comment, the member's description", f.Name)
	}
	p := object{{"description", doc}}
	tagInt := func(key string) (member, bool) {
		n, err := strconv.ParseInt(f.Tag.Get(key), 10, 64)
		return member{map[string]string{"min": "minimum", "max": "maximum"}[key], n}, err == nil
	}
	switch {
	case f.Type == reflect.TypeFor[time.Duration]():
		return append(p, member{"type", "string"}, member{"minLength", 2}, member{"pattern", durationPattern},
			member{"examples", []string{"15s", "1m"}}), nil
	case f.Type.Kind() == reflect.Bool:
		return append(p, member{"type", "boolean"}, member{"default", f.Tag.Get("default") == "true"}), nil
	case f.Type.Kind() == reflect.Int:
		p = append(p, member{"type", "integer"})
		for _, key := range []string{"min", "max"} {
			if m, ok := tagInt(key); ok {
				p = append(p, m)
			}
		}
		if n, err := strconv.ParseInt(f.Tag.Get("default"), 10, 64); err == nil {
			p = append(p, member{"default", n})
		}
		return p, nil
	case f.Type.Kind() != reflect.String:
		return nil, fmt.Errorf("field %s has type %s, not string, bool, int or time.Duration", f.Name, f.Type)
	}
	p = append(p, member{"type", "string"})
	pattern := f.Tag.Get("pattern")
	switch {
	case strings.Contains(flags, ",file,"):
		p, pattern = append(p, member{"minLength", 1}), filePattern
	case strings.Contains(flags, ",url,"):
		p, pattern = append(p, member{"format", "uri"}), urlPattern
	}
	if m, ok := tagInt("min"); ok {
		p = append(p, member{"minLength", m.val})
	}
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, fmt.Errorf("field %s: %w", f.Name, err)
	}
	if pattern != "" {
		p = append(p, member{"pattern", pattern})
	}
	return p, nil
}

// fieldDocs returns the doc comments, each as one line, of the fields of
// struct type typeName in the Go file src.
func fieldDocs(src, typeName string) (map[string]string, error) {
	file, err := parser.ParseFile(token.NewFileSet(), src, nil, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("reading the doc comments: %w", err)
	}
	var docs map[string]string
	ast.Inspect(file, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != typeName {
			return true
		}
		docs = map[string]string{}
		for _, f := range ts.Type.(*ast.StructType).Fields.List {
			for _, name := range f.Names {
				docs[name.Name] = strings.Join(strings.Fields(f.Doc.Text()), " ")
			}
		}
		return false
	})
	if docs == nil {
		return nil, fmt.Errorf("%s declares no struct %s", src, typeName)
	}
	return docs, nil
}

// object is a JSON object whose keys keep their order.
type object []member

type member struct {
	key string
	val any
}

// orderedAs returns o with the keys that the JSON object old has in old's
// order, the others after them in o's order.
func (o object) orderedAs(old []byte) object {
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(old))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return o
	}
	for dec.More() {
		tok, err := dec.Token()
		var skip json.RawMessage
		if err != nil || dec.Decode(&skip) != nil {
			return o
		}
		keys = append(keys, tok.(string))
	}
	rank := func(m member) int {
		if i := slices.Index(keys, m.key); i >= 0 {
			return i
		}
		return len(keys)
	}
	o = slices.Clone(o)
	slices.SortStableFunc(o, func(a, b member) int { return rank(a) - rank(b) })
	return o
}

// encode writes v as JSON as schema.json spells it: an object's keys in
// order, no escaping of <, > and &.
func encode(v any) string {
	if o, ok := v.(object); ok {
		var parts []string
		for _, m := range o {
			parts = append(parts, encode(m.key)+":"+encode(m.val))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	return out.String()
}

// Map is a storage.Block of plain values (strings, bools, int64s; a
// duration is a string time.ParseDuration reads) that records the
// problems reported through it, each as "member: message".
type Map struct {
	Values   map[string]any
	Problems []string
}

var _ storage.Block = (*Map)(nil)

// String implements storage.Block.
func (b *Map) String(name string, required bool) (string, bool) {
	v, ok := b.Values[name]
	if !ok {
		if required {
			b.Errorf(name, "is required")
		}
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		b.Errorf(name, "must be a string")
	}
	return s, ok
}

// Bool implements storage.Block.
func (b *Map) Bool(name string, def bool) bool {
	if v, ok := b.Values[name].(bool); ok {
		return v
	}
	return def
}

// Int implements storage.Block.
func (b *Map) Int(name string) (int64, bool) { v, ok := b.Values[name].(int64); return v, ok }

// Duration implements storage.Block.
func (b *Map) Duration(name string) time.Duration {
	s, ok := b.Values[name].(string)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		b.Errorf(name, "must be a positive duration")
		return 0
	}
	return d
}

// LocalPath implements storage.Block: s as it is.
func (b *Map) LocalPath(name, s string) string { return s }

// URL implements storage.Block.
func (b *Map) URL(name, s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		b.Errorf(name, "%q is not an http(s) URL", s)
		return nil, false
	}
	return u, true
}

// Has implements storage.Block.
func (b *Map) Has(name string) bool { _, ok := b.Values[name]; return ok }

// Require implements storage.Block.
func (b *Map) Require(name, why string) { b.Errorf(name, "is required (%s)", why) }

// Errorf implements storage.Block.
func (b *Map) Errorf(name, format string, args ...any) {
	b.Problems = append(b.Problems, name+": "+fmt.Sprintf(format, args...))
}
