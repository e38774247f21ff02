package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
)

// wire types fix field order and names of the JSON document.
type wireCatalog struct {
	SchemaVersion      int          `json:"schema_version"`
	DistributorVersion string       `json:"distributor_version,omitempty"`
	CreatedAt          string       `json:"created_at"`
	UpdatedAt          string       `json:"updated_at"`
	State              *wireState   `json:"state"`
	Outputs            []wireOutput `json:"outputs"`
}

type wireState struct {
	Mode string `json:"mode"`
}

type wireOutput struct {
	Path          string      `json:"path"`
	PipelineID    string      `json:"pipeline_id"`
	DestinationID string      `json:"destination_id"`
	Source        *wireSource `json:"source"`
	Kind          string      `json:"kind"`
	SourcePath    string      `json:"source_path,omitempty"`
	Transform     string      `json:"transform,omitempty"`
	URL           string      `json:"url,omitempty"`
	SHA256        string      `json:"sha256"`
	Size          *int64      `json:"size"`
	CreatedAt     string      `json:"created_at"`
	UpdatedAt     string      `json:"updated_at"`
}

type wireSource struct {
	ID      string `json:"id"`
	Digest  string `json:"digest"`
	Created string `json:"created"`
}

// FormatTime formats t the way the catalog stores timestamps: UTC, RFC3339,
// second precision.
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// Read classifies the bytes of a catalog file. data == nil means the file
// does not exist (StatusNone). It never fails: problems yield StatusInvalid
// with State.Problem set.
func Read(data []byte) State {
	if data == nil {
		return State{Status: StatusNone}
	}
	// The common case first: a valid schema-4 catalog decodes in one pass.
	// Only a document that fails is probed to classify it.
	if c, err := Parse(data); err == nil {
		return State{Status: StatusCatalog, SchemaVersion: SchemaVersion, Catalog: c}
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return State{Status: StatusInvalid, Problem: fmt.Errorf("not a JSON object: %w", err)}
	}
	raw, ok := probe["schema_version"]
	if !ok {
		return State{Status: StatusInvalid, Problem: errors.New("no schema_version")}
	}
	var version int
	if err := json.Unmarshal(raw, &version); err != nil {
		return State{Status: StatusInvalid, Problem: fmt.Errorf("schema_version %s is not an integer", raw)}
	}
	switch {
	case version >= 1 && version <= 3:
		return State{Status: StatusLegacy, SchemaVersion: version,
			Problem: fmt.Errorf("schema_version %d is superseded legacy state", version)}
	case version > SchemaVersion:
		return State{Status: StatusFuture, SchemaVersion: version,
			Problem: fmt.Errorf("schema_version %d is newer than this distributor understands (%d)", version, SchemaVersion)}
	case version != SchemaVersion:
		return State{Status: StatusInvalid, SchemaVersion: version,
			Problem: fmt.Errorf("schema_version %d is not a known version", version)}
	}
	c, err := Parse(data)
	if err != nil {
		return State{Status: StatusInvalid, SchemaVersion: version, Problem: err}
	}
	return State{Status: StatusCatalog, SchemaVersion: version, Catalog: c}
}

// Parse decodes and validates a schema-4 document strictly: unknown fields,
// missing required fields and trailing data are errors.
func Parse(data []byte) (*Catalog, error) {
	// encoding/json silently turns invalid UTF-8 (and escaped lone
	// surrogates) into U+FFFD; a catalog must not be "repaired" that way.
	if !utf8.Valid(data) {
		return nil, errors.New("decode catalog: not valid UTF-8")
	}
	if hasLoneSurrogate(data) {
		return nil, errors.New("decode catalog: contains an unpaired escaped UTF-16 surrogate (\\uD800-\\uDFFF): not valid Unicode")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w wireCatalog
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("decode catalog: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decode catalog: trailing data after the JSON document")
	}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	c := &Catalog{SchemaVersion: w.SchemaVersion, DistributorVersion: w.DistributorVersion}
	c.CreatedAt = parseTime(w.CreatedAt, "created_at", add)
	c.UpdatedAt = parseTime(w.UpdatedAt, "updated_at", add)
	if w.State == nil {
		add("state: missing")
	} else if w.State.Mode != ModeCatalog {
		add("state.mode: %q is not %q", w.State.Mode, ModeCatalog)
	}
	if w.Outputs == nil {
		var keys map[string]json.RawMessage
		if json.Unmarshal(data, &keys) != nil || keys["outputs"] == nil || string(keys["outputs"]) == "null" {
			add("outputs: missing (an empty list is [])")
		}
	}
	c.Outputs = make([]Output, 0, len(w.Outputs))
	for i, wo := range w.Outputs {
		field := fmt.Sprintf("outputs[%d]", i)
		fadd := func(format string, args ...any) { add(field+"."+format, args...) }
		o := Output{Path: wo.Path, PipelineID: wo.PipelineID, DestinationID: wo.DestinationID,
			Kind: wo.Kind, SourcePath: wo.SourcePath, Transform: wo.Transform, URL: wo.URL, SHA256: wo.SHA256}
		if wo.Source == nil {
			fadd("source: missing")
		} else {
			o.Source = Source{ID: wo.Source.ID, Digest: wo.Source.Digest}
			o.Source.Created = parseTime(wo.Source.Created, "source.created", fadd)
		}
		if wo.Size == nil {
			fadd("size: missing")
		} else {
			o.Size = *wo.Size
		}
		o.CreatedAt = parseTime(wo.CreatedAt, "created_at", fadd)
		o.UpdatedAt = parseTime(wo.UpdatedAt, "updated_at", fadd)
		c.Outputs = append(c.Outputs, o)
	}
	if len(errs) == 0 {
		if err := Validate(c); err != nil {
			return nil, err
		}
		return c, nil
	}
	if err := Validate(c); err != nil {
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// hasLoneSurrogate reports whether data holds a \uD800-\uDFFF escape that
// is not part of a high+low surrogate pair.
func hasLoneSurrogate(data []byte) bool {
	esc := func(i int) (rune, bool) {
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return 0, false
		}
		var r rune
		for _, c := range data[i+2 : i+6] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		r, ok := esc(i)
		if !ok {
			i++ // skip the escaped character (e.g. \\)
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := esc(i + 6); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				i += 11
				continue
			}
			return true
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		}
		i += 5
	}
	return false
}

func parseTime(s, field string, add func(string, ...any)) time.Time {
	if s == "" {
		add("%s: missing", field)
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		add("%s: %q is not an RFC3339 timestamp", field, s)
		return time.Time{}
	}
	return t.UTC()
}

// Encode validates c and writes it deterministically: 2-space indent, fields
// in contract order, outputs sorted by path, UTC second-precision timestamps,
// trailing newline. The Catalog's SchemaVersion is always written as 4.
func Encode(c *Catalog) ([]byte, error) {
	n := c.Clone()
	n.SchemaVersion = SchemaVersion
	sort.Slice(n.Outputs, func(i, j int) bool { return n.Outputs[i].Path < n.Outputs[j].Path })
	if err := Validate(n); err != nil {
		return nil, fmt.Errorf("encode catalog: %w", err)
	}
	// Written by hand in the exact layout json.Encoder with a 2-space
	// indent would produce (the golden files pin it), in one pre-sized
	// buffer: a 100k-output catalog is encoded without the second,
	// indenting pass.
	b := make([]byte, 0, 256+len(n.Outputs)*640)
	b = append(b, "{\n  \"schema_version\": 4,\n"...)
	if n.DistributorVersion != "" {
		b = appendField(b, "  ", "distributor_version", n.DistributorVersion, true)
	}
	b = appendTime(b, "  ", "created_at", n.CreatedAt, true)
	b = appendTime(b, "  ", "updated_at", n.UpdatedAt, true)
	b = append(b, "  \"state\": {\n    \"mode\": \"catalog\"\n  },\n  \"outputs\": ["...)
	if len(n.Outputs) == 0 {
		b = append(b, "]\n}\n"...)
		return b, nil
	}
	for i := range n.Outputs {
		o := &n.Outputs[i]
		if i > 0 {
			b = append(b, ',')
		}
		const in = "      "
		b = append(b, "\n    {\n"...)
		b = appendField(b, in, "path", o.Path, true)
		b = appendField(b, in, "pipeline_id", o.PipelineID, true)
		b = appendField(b, in, "destination_id", o.DestinationID, true)
		b = append(b, in+"\"source\": {\n"...)
		b = appendField(b, in+"  ", "id", o.Source.ID, true)
		b = appendField(b, in+"  ", "digest", o.Source.Digest, true)
		b = appendTime(b, in+"  ", "created", o.Source.Created, false)
		b = append(b, in+"},\n"...)
		b = appendField(b, in, "kind", o.Kind, true)
		if o.SourcePath != "" {
			b = appendField(b, in, "source_path", o.SourcePath, true)
		}
		if o.Transform != "" {
			b = appendField(b, in, "transform", o.Transform, true)
		}
		if o.URL != "" {
			b = appendField(b, in, "url", o.URL, true)
		}
		b = appendField(b, in, "sha256", o.SHA256, true)
		b = append(b, in+"\"size\": "...)
		b = strconv.AppendInt(b, o.Size, 10)
		b = append(b, ",\n"...)
		b = appendTime(b, in, "created_at", o.CreatedAt, true)
		b = appendTime(b, in, "updated_at", o.UpdatedAt, false)
		b = append(b, "    }"...)
	}
	b = append(b, "\n  ]\n}\n"...)
	return b, nil
}

// appendField appends `<indent>"name": "value"` (with a comma if more
// follows) and a newline.
func appendField(b []byte, indent, name, value string, more bool) []byte {
	b = append(b, indent...)
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, "\": "...)
	b = appendString(b, value)
	if more {
		b = append(b, ',')
	}
	return append(b, '\n')
}

// appendTime is appendField for a timestamp, formatted as FormatTime does
// without an intermediate string.
func appendTime(b []byte, indent, name string, t time.Time, more bool) []byte {
	b = append(b, indent...)
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, "\": \""...)
	b = t.UTC().Truncate(time.Second).AppendFormat(b, time.RFC3339)
	b = append(b, '"')
	if more {
		b = append(b, ',')
	}
	return append(b, '\n')
}

// appendString appends s as a JSON string, escaped exactly as encoding/json
// does with HTML escaping off: quote, backslash, control characters, U+2028
// and U+2029; invalid UTF-8 becomes U+FFFD (validation has refused it).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\\ufffd"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
