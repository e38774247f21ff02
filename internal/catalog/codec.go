package catalog

import (
	"github.com/go-json-experiment/json/jsontext"

	"errors"
	"fmt"
	"github.com/distributor-dev/distributor/internal/strictjson"
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
	var probe map[string]jsontext.Value
	if err := strictjson.Unmarshal(data, &probe); err != nil {
		if errors.Is(err, strictjson.ErrInvalidText) {
			return State{Status: StatusInvalid, Problem: fmt.Errorf("decode catalog: %w", err)}
		}
		return State{Status: StatusInvalid, Problem: fmt.Errorf("not a JSON object: %w", err)}
	}
	raw, ok := probe["schema_version"]
	if !ok {
		return State{Status: StatusInvalid, Problem: errors.New("no schema_version")}
	}
	var version int
	if err := strictjson.Unmarshal(raw, &version); err != nil {
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
	// One strict reader: invalid UTF-8, unpaired surrogate escapes,
	// duplicate or unknown members and trailing data are all errors.
	var w wireCatalog
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("decode catalog: %w", err)
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
		var keys map[string]jsontext.Value
		if strictjson.Unmarshal(data, &keys) != nil || keys["outputs"] == nil || string(keys["outputs"]) == "null" {
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
		if i > 0 {
			b = append(b, ',')
		}
		b = appendOutput(b, &n.Outputs[i])
	}
	b = append(b, "\n  ]\n}\n"...)
	return b, nil
}

// appendOutput appends one record, from its opening newline to its closing
// brace, in the document's layout.
func appendOutput(b []byte, o *Output) []byte {
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
	return b
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
