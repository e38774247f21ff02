package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// FormatTime formats t as the catalog stores timestamps: UTC, RFC3339, second precision.
func FormatTime(t time.Time) string {
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// Encode validates c and writes it deterministically: 2-space indent, fields
// in contract order, outputs sorted by path, UTC second-precision timestamps,
// trailing newline, schema_version 4.
func Encode(c *Catalog) ([]byte, error) {
	n := c.Clone()
	n.SchemaVersion = SchemaVersion
	sort.Slice(n.Outputs, func(i, j int) bool { return n.Outputs[i].Path < n.Outputs[j].Path })
	if err := Validate(n); err != nil {
		return nil, fmt.Errorf("encode catalog: %w", err)
	}
	buf := bytes.NewBuffer(make([]byte, 0, 256+len(n.Outputs)*640))
	e, _ := NewEncoder(buf, n.Header()) // its header validated above
	for i := range n.Outputs {
		put(e, n.Outputs[i].Path, &n.Outputs[i], nil, nil) // so was every record
	}
	err := e.Close()
	return buf.Bytes(), err
}

// Encoder writes a catalog record by record in Encode's layout, in constant
// memory: the one catalog writer (Encode, Edit.ApplyTo).
type Encoder struct {
	w    io.Writer
	buf  []byte // written to w when it holds flushAt bytes, and at Close
	n    int
	last []byte // the last record's path
	err  error
}

// flushAt is the size of the Encoder's writes.
const flushAt = 256 << 10

// NewEncoder writes h to w and returns an Encoder for the records, added in
// strictly increasing path order; Close finishes the document.
func NewEncoder(w io.Writer, h Header) (*Encoder, error) {
	if h.CreatedAt.IsZero() {
		return nil, errors.New("encode catalog: created_at: missing")
	}
	if h.UpdatedAt.IsZero() {
		return nil, errors.New("encode catalog: updated_at: missing")
	}
	b := append(make([]byte, 0, flushAt+4096), "{\n  \"schema_version\": 4"...)
	if h.DistributorVersion != "" {
		b = appendField(b, ",\n  \"distributor_version\": ", h.DistributorVersion)
	}
	b = appendTime(b, ",\n  \"created_at\": ", h.CreatedAt)
	b = appendTime(b, ",\n  \"updated_at\": ", h.UpdatedAt)
	return &Encoder{w: w, buf: append(b, ",\n  \"state\": {\n    \"mode\": \"catalog\"\n  },\n  \"outputs\": ["...)}, nil
}

// Add validates o and writes it. Paths must increase strictly.
func (e *Encoder) Add(o *Output) error {
	var errs []error
	validateOutput(o, field(e.n), func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }, nil)
	return put(e, o.Path, o, nil, errs)
}

// put writes the record at path after the last one unless it has problems
// (errs): o, or with o nil raw, a validated record's bytes brace to brace
// in Encode's layout.
func put[P string | []byte](e *Encoder, path P, o *Output, raw []byte, errs []error) error {
	if e.err != nil {
		return e.err
	}
	if e.n > 0 && string(path) <= string(e.last) {
		errs = append(errs, fmt.Errorf("%s.path: %q is not after %q (records must be sorted by path, each path once)", field(e.n), path, e.last))
	}
	if len(errs) > 0 {
		e.err = fmt.Errorf("encode catalog: %w", errors.Join(errs...))
		return e.err
	}
	if e.n > 0 {
		e.buf = append(e.buf, ',')
	}
	if o != nil {
		e.buf = appendOutput(e.buf, o)
	} else {
		e.buf = append(append(e.buf, "\n    "...), raw...)
	}
	e.n++
	e.last = append(e.last[:0], path...)
	if len(e.buf) >= flushAt {
		e.flush()
	}
	return e.err
}

// Close writes the end of the document.
func (e *Encoder) Close() error {
	if e.err != nil {
		return e.err
	}
	if e.n > 0 {
		e.buf = append(e.buf, "\n  "...)
	}
	e.buf = append(e.buf, "]\n}\n"...)
	e.flush()
	return e.err
}

func (e *Encoder) flush() {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
}

// Edit is a change to a catalog, small next to it: records to put (new or
// replacing) and paths to delete. Applying it streams the base once.
type Edit struct {
	Fresh  bool     // drop every record of the base: the result holds Put only
	Header Header   // the result's header, written as is
	Put    []Output // records to add or replace, each path once
	Delete []string // paths whose records go (absent ones are ignored)
}

// sorted returns e's puts and deletes by path, refusing a path put twice or deleted.
func (e *Edit) sorted() ([]Output, []string, error) {
	byPath := func(a, b Output) int { return strings.Compare(a.Path, b.Path) }
	put := e.Put // a plan's edit is sorted: no copy of a million records
	if !slices.IsSortedFunc(put, byPath) {
		put = slices.SortedFunc(slices.Values(e.Put), byPath)
	}
	del := slices.Sorted(slices.Values(e.Delete))
	for i := range put {
		if i > 0 && put[i].Path == put[i-1].Path {
			return nil, nil, fmt.Errorf("catalog edit: %q put twice", put[i].Path)
		}
		if _, ok := slices.BinarySearch(del, put[i].Path); ok {
			return nil, nil, fmt.Errorf("catalog edit: %q both put and deleted", put[i].Path)
		}
	}
	return put, del, nil
}

// ApplyTo streams base (nil: none) through e to w in Encode's layout and
// returns the number of records written. It validates every base record;
// an unsorted base fails with ErrUnsorted (Encode sorts one). With splice,
// base is one ScanCanonical found in Encode's layout, and the records e
// leaves alone are copied undecoded: the caller guarantees (by the
// object's version) that the base is the one scanned.
func (e *Edit) ApplyTo(base io.Reader, w io.Writer, splice bool) (int, error) {
	put, del, err := e.sorted()
	if err != nil {
		return 0, err
	}
	enc, err := NewEncoder(w, e.Header)
	if err != nil {
		return 0, err
	}
	m := &merger{enc: enc, put: put, del: del}
	if base != nil && !e.Fresh {
		r := newReader(base, func(o *Output, path, raw []byte) error {
			if raw != nil {
				return mergeAt(m, path, nil, raw)
			}
			return mergeAt(m, o.Path, o, nil)
		})
		r.copy = splice
		if err := r.scan(); err != nil {
			return enc.n, err
		}
	}
	for ; m.i < len(m.put); m.i++ {
		if err := enc.Add(&m.put[m.i]); err != nil {
			return enc.n, err
		}
	}
	return enc.n, enc.Close()
}

// merger merges an edit into a base's records, which come in path order.
type merger struct {
	enc  *Encoder
	put  []Output // sorted by path
	del  []string // sorted
	i, j int      // the next put and delete
}

// mergeAt, called with each base record in path order (o, or with o nil
// raw: its bytes at path), writes the puts before it and the one replacing
// it, else the record unless deleted.
func mergeAt[P string | []byte](m *merger, path P, o *Output, raw []byte) error {
	for m.i < len(m.put) && m.put[m.i].Path < string(path) {
		if err := m.enc.Add(&m.put[m.i]); err != nil {
			return err
		}
		m.i++
	}
	for m.j < len(m.del) && m.del[m.j] < string(path) {
		m.j++
	}
	switch {
	case m.i < len(m.put) && m.put[m.i].Path == string(path):
		m.i++
		return m.enc.Add(&m.put[m.i-1])
	case m.j < len(m.del) && m.del[m.j] == string(path):
		return nil
	}
	return put(m.enc, path, o, raw, nil) // validated by the reader
}

// appendOutput appends one record, from its opening newline to its brace.
func appendOutput(b []byte, o *Output) []byte {
	const in = ",\n      " // the end of the member before, and the indent
	b = appendField(b, "\n    {\n      \"path\": ", o.Path)
	b = appendField(b, in+`"pipeline_id": `, o.PipelineID)
	b = appendField(b, in+`"destination_id": `, o.DestinationID)
	b = appendField(b, in+"\"source\": {\n        \"id\": ", o.Source.ID)
	b = appendField(b, in+`  "digest": `, o.Source.Digest)
	b = appendTime(b, in+`  "created": `, o.Source.Created)
	b = appendField(b, "\n      },\n      \"kind\": ", o.Kind)
	if o.SourcePath != "" {
		b = appendField(b, in+`"source_path": `, o.SourcePath)
	}
	if o.Transform != "" {
		b = appendField(b, in+`"transform": `, o.Transform)
	}
	if o.URL != "" {
		b = appendField(b, in+`"url": `, o.URL)
	}
	b = appendField(b, in+`"sha256": `, o.SHA256)
	b = strconv.AppendInt(append(b, in+`"size": `...), o.Size, 10)
	b = appendTime(b, in+`"created_at": `, o.CreatedAt)
	b = appendTime(b, in+`"updated_at": `, o.UpdatedAt)
	return append(b, recordClose...)
}

// appendField appends lit, what precedes a value, and the value as a JSON string.
func appendField(b []byte, lit, value string) []byte {
	return appendString(append(b, lit...), value)
}

// appendTime is appendField for a timestamp in FormatTime's form.
func appendTime(b []byte, lit string, t time.Time) []byte {
	b = t.UTC().Truncate(time.Second).AppendFormat(append(append(b, lit...), '"'), time.RFC3339)
	return append(b, '"')
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
			if esc := shortEscape[c]; esc != 0 {
				b = append(b, '\\', esc)
			} else {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		invalid := r == utf8.RuneError && size == 1
		if invalid || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if invalid {
				b = append(b, "\\ufffd"...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			}
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// shortEscape is the two-character escape of the ASCII characters with one.
var shortEscape = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't', '\b': 'b', '\f': 'f'}
