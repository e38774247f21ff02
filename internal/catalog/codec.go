package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
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
	w := wireCatalog{
		SchemaVersion:      SchemaVersion,
		DistributorVersion: n.DistributorVersion,
		CreatedAt:          FormatTime(n.CreatedAt),
		UpdatedAt:          FormatTime(n.UpdatedAt),
		State:              &wireState{Mode: ModeCatalog},
		Outputs:            make([]wireOutput, 0, len(n.Outputs)),
	}
	for _, o := range n.Outputs {
		size := o.Size
		w.Outputs = append(w.Outputs, wireOutput{
			Path: o.Path, PipelineID: o.PipelineID, DestinationID: o.DestinationID,
			Source: &wireSource{ID: o.Source.ID, Digest: o.Source.Digest, Created: FormatTime(o.Source.Created)},
			Kind:   o.Kind, SourcePath: o.SourcePath, Transform: o.Transform, URL: o.URL,
			SHA256: o.SHA256, Size: &size,
			CreatedAt: FormatTime(o.CreatedAt), UpdatedAt: FormatTime(o.UpdatedAt),
		})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("encode catalog: %w", err)
	}
	return buf.Bytes(), nil
}
