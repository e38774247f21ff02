package catalog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/distributor-dev/distributor/internal/strictjson"
)

// Header is the document-level part of a catalog: everything but its
// records.
type Header struct {
	DistributorVersion string // optional
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Header returns c's header.
func (c *Catalog) Header() Header {
	return Header{DistributorVersion: c.DistributorVersion, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// ErrUnsorted is returned (wrapped) by Scan for a document whose outputs are
// not in strictly increasing path order. Such a document can still be a
// valid catalog (Parse accepts it); distributor never writes one.
var ErrUnsorted = errors.New("catalog outputs are not sorted by path")

// errStop is how a callback's error travels through Scan unchanged.
type errStop struct{ err error }

func (e *errStop) Error() string { return e.err.Error() }
func (e *errStop) Unwrap() error { return e.err }

// Scan decodes a schema-4 catalog from r strictly and calls fn for each
// record in document order, so that memory does not grow with the number
// of records (fn decides what to keep; each call gets a fresh Output). It
// enforces every rule Parse does, plus path order: records must be sorted
// by path, as Encode writes them (ErrUnsorted otherwise). It returns the
// header and the number of records. An error from fn stops the scan and is
// returned as is.
//
// Scan says only whether a document is a valid sorted catalog: for the
// classification of any other document (legacy, future, invalid, and the
// problems' full list) read it whole with Read.
func Scan(r io.Reader, fn func(*Output) error) (Header, int, error) {
	return scan(r, func(o *Output, _ []byte, _ bool) error { return fn(o) })
}

// ScanCanonical is Scan that also reports whether every record is laid out
// exactly as Encode writes it, the condition for applying an edit to the
// same bytes with Splice.
func ScanCanonical(r io.Reader, fn func(*Output) error) (h Header, n int, canonical bool, err error) {
	canonical = true
	h, n, err = scan(r, func(o *Output, _ []byte, c bool) error {
		canonical = canonical && c
		return fn(o)
	})
	return h, n, canonical && err == nil, err
}

// scan is Scan that also gives fn each record's bytes (valid until fn
// returns) and whether they are in Encode's layout (see parseCanonical).
func scan(r io.Reader, fn func(o *Output, raw []byte, canonical bool) error) (Header, int, error) {
	s := scanner{fn: fn}
	br := bufio.NewReaderSize(r, 256<<10)
	err := s.fast(br)
	h := s.resume.header
	if err == nil && !s.resume.done {
		// The document departs from Encode's layout at s.resume: decode
		// the rest token by token, from the bytes the fast path held back.
		s.dec = strictjson.NewDecoder(io.MultiReader(strings.NewReader(s.resume.prefix(s.n)),
			bytes.NewReader(s.resume.pending), br))
		h, err = s.document()
	}
	var stop *errStop
	if errors.As(err, &stop) {
		return Header{}, s.n, stop.err
	}
	if err != nil {
		return Header{}, s.n, fmt.Errorf("decode catalog: %w", err)
	}
	return h, s.n, nil
}

type scanner struct {
	dec    *jsontext.Decoder
	fn     func(o *Output, raw []byte, canonical bool) error
	n      int
	last   string
	memo   canonMemo
	resume resumePoint
}

func (s *scanner) document() (Header, error) {
	h := s.resume.header
	if err := s.delim('{'); err != nil {
		return h, err
	}
	// Resuming inside the outputs (see resumePoint), the members before
	// them were read by the fast path: they count as seen, and a second
	// one is a duplicate, which the decoder cannot tell as it never saw
	// the first.
	version, state, created, updated := s.resume.inOutputs, s.resume.inOutputs, s.resume.inOutputs, s.resume.inOutputs
	outputs, dv := false, s.resume.inOutputs && h.DistributorVersion != ""
	if s.resume.inOutputs {
		name, err := s.name()
		if err != nil || string(name) != "outputs" {
			return h, fmt.Errorf("resume the outputs: %v", err)
		}
		if err := s.outputs(); err != nil {
			return h, err
		}
		outputs = true
	}
	for s.dec.PeekKind() != '}' {
		name, err := s.name()
		if err != nil {
			return h, err
		}
		if s.resume.inOutputs {
			seen := map[string]bool{"schema_version": version, "state": state, "outputs": outputs,
				"created_at": created, "updated_at": updated, "distributor_version": dv}
			if seen[string(name)] {
				return h, fmt.Errorf("duplicate object member name %q", string(name))
			}
		}
		switch string(name) {
		case "schema_version":
			n, err := s.int(top("schema_version"))
			if err != nil {
				return h, err
			}
			if n != SchemaVersion {
				return h, fmt.Errorf("schema_version: %d is not %d", n, SchemaVersion)
			}
			version = true
		case "distributor_version":
			if h.DistributorVersion, err = s.str(top("distributor_version")); err != nil {
				return h, err
			}
			dv = true
		case "created_at":
			if h.CreatedAt, err = s.time(top("created_at")); err != nil {
				return h, err
			}
			created = true
		case "updated_at":
			if h.UpdatedAt, err = s.time(top("updated_at")); err != nil {
				return h, err
			}
			updated = true
		case "state":
			if err := s.state(); err != nil {
				return h, err
			}
			state = true
		case "outputs":
			if err := s.outputs(); err != nil {
				return h, err
			}
			outputs = true
		default:
			return h, fmt.Errorf("unknown field %q", string(name))
		}
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return h, err
	}
	if _, err := s.dec.ReadToken(); err != io.EOF {
		return h, errors.New("trailing data after the JSON document")
	}
	for name, ok := range map[string]bool{"schema_version": version, "state": state, "outputs": outputs,
		"created_at": created, "updated_at": updated} {
		if !ok {
			return h, fmt.Errorf("%s: missing", name)
		}
	}
	return h, nil
}

func (s *scanner) state() error {
	if err := s.delim('{'); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	mode := false
	for s.dec.PeekKind() != '}' {
		name, err := s.name()
		if err != nil {
			return err
		}
		if string(name) != "mode" {
			return fmt.Errorf("state: unknown field %q", string(name))
		}
		m, err := s.str(top("state.mode"))
		if err != nil {
			return err
		}
		if m != ModeCatalog {
			return fmt.Errorf("state.mode: %q is not %q", m, ModeCatalog)
		}
		mode = true
	}
	if !mode {
		return errors.New("state.mode: missing")
	}
	_, err := s.dec.ReadToken()
	return err
}

func (s *scanner) outputs() error {
	if err := s.delim('['); err != nil {
		return fmt.Errorf("outputs: %w", err)
	}
	if s.resume.inOutputs && s.n > 0 {
		// The placeholder standing for the records already read.
		if err := s.dec.SkipValue(); err != nil {
			return err
		}
	}
	for s.dec.PeekKind() != ']' {
		f := field(s.n)
		// Each record is read whole (which checks its syntax, UTF-8 and
		// duplicate names) and then decoded from its bytes: in one pass
		// over its lines when it is in Encode's layout, token by token
		// otherwise.
		raw, err := s.dec.ReadValue()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		o := new(Output)
		canonical := parseCanonical(raw, o, &s.memo)
		if !canonical {
			*o = Output{}
			if raw.Kind() != '{' {
				return fmt.Errorf("%s: expected {, found %v", f, raw.Kind())
			}
			sub := scanner{dec: strictjson.NewDecoder(bytes.NewReader(raw))}
			if err := sub.output(o, f); err != nil {
				return err
			}
		}
		if err := s.record(o, raw, canonical); err != nil {
			return err
		}
	}
	_, err := s.dec.ReadToken()
	return err
}

// record validates the next record, checks its path comes after the last
// one, and gives it to the callback.
func (s *scanner) record(o *Output, raw []byte, canonical bool) error {
	f := field(s.n)
	var errs []error
	validateOutput(o, f, func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) })
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if s.n > 0 && o.Path <= s.last {
		if o.Path == s.last {
			return fmt.Errorf("%s.path: %q duplicates outputs[%d]", f, o.Path, s.n-1)
		}
		return fmt.Errorf("%s.path: %q after %q: %w", f, o.Path, s.last, ErrUnsorted)
	}
	s.last = o.Path
	s.n++
	if err := s.fn(o, raw, canonical); err != nil {
		return &errStop{err}
	}
	return nil
}

// output decodes one record; validateOutput checks its values.
func (s *scanner) output(o *Output, f field) error {
	if err := s.delim('{'); err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	const (
		hasSource = 1 << iota
		hasSize
		hasCreated
		hasUpdated
	)
	var has int
	for s.dec.PeekKind() != '}' {
		name, err := s.name()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		var dst *string
		switch string(name) {
		case "path":
			dst = &o.Path
		case "pipeline_id":
			dst = &o.PipelineID
		case "destination_id":
			dst = &o.DestinationID
		case "kind":
			dst = &o.Kind
		case "source_path":
			dst = &o.SourcePath
		case "transform":
			dst = &o.Transform
		case "url":
			dst = &o.URL
		case "sha256":
			dst = &o.SHA256
		case "size":
			if o.Size, err = s.int(f.at("size")); err != nil {
				return err
			}
			has |= hasSize
		case "created_at":
			if o.CreatedAt, err = s.time(f.at("created_at")); err != nil {
				return err
			}
			has |= hasCreated
		case "updated_at":
			if o.UpdatedAt, err = s.time(f.at("updated_at")); err != nil {
				return err
			}
			has |= hasUpdated
		case "source":
			if err := s.source(&o.Source, f); err != nil {
				return err
			}
			has |= hasSource
		default:
			return fmt.Errorf("%s: unknown field %q", f, string(name))
		}
		if dst != nil {
			if *dst, err = s.str(f.at(memberName(name))); err != nil {
				return err
			}
		}
	}
	switch {
	case has&hasSource == 0:
		return fmt.Errorf("%s.source: missing", f)
	case has&hasSize == 0:
		return fmt.Errorf("%s.size: missing", f)
	case has&hasCreated == 0:
		return fmt.Errorf("%s.created_at: missing", f)
	case has&hasUpdated == 0:
		return fmt.Errorf("%s.updated_at: missing", f)
	}
	_, err := s.dec.ReadToken()
	return err
}

func (s *scanner) source(src *Source, f field) error {
	if err := s.delim('{'); err != nil {
		return fmt.Errorf("%s.source: %w", f, err)
	}
	created := false
	for s.dec.PeekKind() != '}' {
		name, err := s.name()
		if err != nil {
			return fmt.Errorf("%s.source: %w", f, err)
		}
		switch string(name) {
		case "id":
			src.ID, err = s.str(f.at("source.id"))
		case "digest":
			src.Digest, err = s.str(f.at("source.digest"))
		case "created":
			src.Created, err = s.time(f.at("source.created"))
			created = true
		default:
			err = fmt.Errorf("%s.source: unknown field %q", f, string(name))
		}
		if err != nil {
			return err
		}
	}
	if !created {
		return fmt.Errorf("%s.source.created: missing", f)
	}
	_, err := s.dec.ReadToken()
	return err
}

// where names a field for messages without formatting it until one is
// needed: record i's name, or a top-level name when i < 0.
type where struct {
	i    int
	name string
}

func (w where) String() string {
	if w.i < 0 {
		return w.name
	}
	return fmt.Sprintf("outputs[%d].%s", w.i, w.name)
}

func top(name string) where { return where{-1, name} }

func (f field) at(name string) where { return where{int(f), name} }

// delim reads the token that opens an object or array.
func (s *scanner) delim(want jsontext.Kind) error {
	tok, err := s.dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != want {
		return fmt.Errorf("expected %v, found %v", want, tok.Kind())
	}
	return nil
}

// name reads an object member name and returns its raw bytes (valid until
// the next read): names distributor writes carry no escapes, so callers
// switch on string(raw) without allocating; nameOf decodes any other.
func (s *scanner) name() ([]byte, error) {
	v, err := s.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if v.Kind() != '"' {
		return nil, fmt.Errorf("%v is not a member name", v.Kind())
	}
	if bytes.IndexByte(v, '\\') >= 0 {
		u, err := jsontext.AppendUnquote(nil, v)
		return u, err
	}
	return v[1 : len(v)-1], nil
}

// memberName returns a record member's name as a constant (no allocation)
// for the names records have.
func memberName(b []byte) string {
	for _, n := range [...]string{"path", "pipeline_id", "destination_id", "kind", "source_path", "transform", "url", "sha256"} {
		if string(b) == n {
			return n
		}
	}
	return string(b)
}

// unquote returns the string a valid JSON string value holds.
func unquote(v jsontext.Value) (string, error) {
	if v.Kind() != '"' {
		return "", fmt.Errorf("%v is not a string", v.Kind())
	}
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), nil
	}
	b, err := jsontext.AppendUnquote(nil, v)
	return string(b), err
}

// str reads a string value; null reads as "" (as encoding/json did).
func (s *scanner) str(what where) (string, error) {
	v, err := s.dec.ReadValue()
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	switch v.Kind() {
	case '"':
		str, err := unquote(v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		return str, nil
	case 'n':
		return "", nil
	}
	return "", fmt.Errorf("%s: %v is not a string", what, v.Kind())
}

// int reads an integral JSON number.
func (s *scanner) int(what where) (int64, error) {
	v, err := s.dec.ReadValue()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if v.Kind() != '0' {
		return 0, fmt.Errorf("%s: %s is not an integer", what, v)
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s is not an integer", what, v)
	}
	return n, nil
}

func (s *scanner) time(what where) (time.Time, error) {
	str, err := s.str(what)
	if err != nil {
		return time.Time{}, err
	}
	if str == "" {
		return time.Time{}, fmt.Errorf("%s: missing", what)
	}
	t, err := time.Parse(time.RFC3339, str)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC3339 timestamp", what, str)
	}
	return t.UTC(), nil
}

// Encoder writes a catalog record by record in Encode's exact layout, so
// that a catalog of any size is written with constant memory.
type Encoder struct {
	w    *bufio.Writer
	buf  []byte
	n    int
	last []byte // the last record's path
	err  error
}

// NewEncoder writes h (schema version 4) to w and returns an Encoder for
// the records, which must be added in strictly increasing path order.
// Close finishes the document.
func NewEncoder(w io.Writer, h Header) (*Encoder, error) {
	if h.CreatedAt.IsZero() {
		return nil, errors.New("encode catalog: created_at: missing")
	}
	if h.UpdatedAt.IsZero() {
		return nil, errors.New("encode catalog: updated_at: missing")
	}
	e := &Encoder{w: bufio.NewWriterSize(w, 256<<10)}
	b := append(e.buf[:0], "{\n  \"schema_version\": 4,\n"...)
	if h.DistributorVersion != "" {
		b = appendField(b, "  ", "distributor_version", h.DistributorVersion, true)
	}
	b = appendTime(b, "  ", "created_at", h.CreatedAt, true)
	b = appendTime(b, "  ", "updated_at", h.UpdatedAt, true)
	b = append(b, "  \"state\": {\n    \"mode\": \"catalog\"\n  },\n  \"outputs\": ["...)
	e.buf = b
	e.flush()
	return e, e.err
}

// Add validates o and writes it. Paths must increase strictly.
func (e *Encoder) Add(o *Output) error {
	if e.err != nil {
		return e.err
	}
	var errs []error
	validateOutput(o, field(e.n), func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) })
	if e.n > 0 && o.Path <= string(e.last) {
		errs = append(errs, fmt.Errorf("%s.path: %q is not after %q (records must be sorted by path, each path once)", field(e.n), o.Path, e.last))
	}
	if len(errs) > 0 {
		e.err = fmt.Errorf("encode catalog: %w", errors.Join(errs...))
		return e.err
	}
	b := e.buf[:0]
	if e.n > 0 {
		b = append(b, ',')
	}
	e.buf = appendOutput(b, o)
	e.n++
	e.last = append(e.last[:0], o.Path...)
	e.flush()
	return e.err
}

// startRaw begins a record whose bytes the caller writes with write, from
// its "path" line to its closing brace: a record copied from a catalog in
// Encode's layout, which Scan validated.
func (e *Encoder) startRaw(path []byte) error {
	if e.err != nil {
		return e.err
	}
	if e.n > 0 && string(path) <= string(e.last) {
		e.err = fmt.Errorf("encode catalog: %s.path: %q is not after %q (records must be sorted by path, each path once)", field(e.n), path, e.last)
		return e.err
	}
	if e.n > 0 {
		e.writeString(openRecord)
	} else {
		e.writeString(openRecord[1:])
	}
	e.n++
	e.last = append(e.last[:0], path...)
	return e.err
}

// openRecord separates a record from the one before it and opens it.
const openRecord = ",\n    {\n"

// writeString writes s as it is.
func (e *Encoder) writeString(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// write writes b as it is.
func (e *Encoder) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

// Close writes the end of the document and flushes it.
func (e *Encoder) Close() error {
	if e.err != nil {
		return e.err
	}
	if e.n == 0 {
		e.buf = append(e.buf[:0], "]\n}\n"...)
	} else {
		e.buf = append(e.buf[:0], "\n  ]\n}\n"...)
	}
	e.flush()
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.err
}

func (e *Encoder) flush() {
	if e.err == nil {
		_, e.err = e.w.Write(e.buf)
	}
}

// Edit is a change to a catalog, small next to the catalog it changes: the
// records to put (added, or replacing the record at their path) and the
// paths to delete. Applying it streams the base once.
type Edit struct {
	// Fresh drops every record of the base: the result holds Put only.
	Fresh bool
	// Header is the result's header, written as is.
	Header Header
	// Put holds the records to add or replace, each path once.
	Put []Output
	// Delete lists paths whose records go (absent ones are ignored).
	Delete []string
}

// sorted returns e's puts sorted by path and its deletes as a set, and
// refuses a path put twice or both put and deleted.
func (e *Edit) sorted() ([]Output, map[string]bool, error) {
	put := append([]Output(nil), e.Put...)
	sort.Slice(put, func(i, j int) bool { return put[i].Path < put[j].Path })
	del := make(map[string]bool, len(e.Delete))
	for _, p := range e.Delete {
		del[p] = true
	}
	for i := range put {
		if i > 0 && put[i].Path == put[i-1].Path {
			return nil, nil, fmt.Errorf("catalog edit: %q put twice", put[i].Path)
		}
		if del[put[i].Path] {
			return nil, nil, fmt.Errorf("catalog edit: %q both put and deleted", put[i].Path)
		}
	}
	return put, del, nil
}

// ApplyTo streams base (nil: no catalog yet, or e.Fresh) through e and
// writes the resulting catalog to w in Encode's layout. A base that is not
// a valid sorted catalog fails (ErrUnsorted for an unsorted one: apply e
// to the parsed catalog with Apply instead). It returns the number of
// records written.
func (e *Edit) ApplyTo(base io.Reader, w io.Writer) (int, error) {
	m, err := e.merger(w)
	if err != nil {
		return 0, err
	}
	if base != nil && !e.Fresh {
		_, _, err := Scan(base, func(o *Output) error {
			keep, err := mergeAt(m, o.Path)
			if keep && err == nil {
				err = m.enc.Add(o)
			}
			return err
		})
		if err != nil {
			return m.enc.n, err
		}
	}
	return m.finish()
}

// merger merges an edit into the records of a base, which come in path
// order, writing the result.
type merger struct {
	enc  *Encoder
	put  []Output // sorted by path
	del  []string // sorted
	i, j int      // the next put and delete
}

// merger starts writing e's result to w.
func (e *Edit) merger(w io.Writer) (*merger, error) {
	put, _, err := e.sorted()
	if err != nil {
		return nil, err
	}
	enc, err := NewEncoder(w, e.Header)
	if err != nil {
		return nil, err
	}
	del := append([]string(nil), e.Delete...)
	sort.Strings(del)
	return &merger{enc: enc, put: put, del: del}, nil
}

// mergeAt is called with each record's path of the base in order: it writes
// the puts that come before it, and the put that replaces it, and reports
// whether the base's record stays (neither replaced nor deleted), for the
// caller to write.
func mergeAt[P string | []byte](m *merger, path P) (keep bool, err error) {
	for m.i < len(m.put) && m.put[m.i].Path < string(path) {
		if err := m.enc.Add(&m.put[m.i]); err != nil {
			return false, err
		}
		m.i++
	}
	for m.j < len(m.del) && m.del[m.j] < string(path) {
		m.j++
	}
	if m.i < len(m.put) && m.put[m.i].Path == string(path) {
		m.i++
		return false, m.enc.Add(&m.put[m.i-1])
	}
	return m.j >= len(m.del) || m.del[m.j] != string(path), nil
}

// finish writes the puts after the base's last record and ends the
// document; it returns the number of records written.
func (m *merger) finish() (int, error) {
	for ; m.i < len(m.put); m.i++ {
		if err := m.enc.Add(&m.put[m.i]); err != nil {
			return m.enc.n, err
		}
	}
	return m.enc.n, m.enc.Close()
}

// Apply returns the catalog that results from applying e to c (nil: no
// catalog), in memory.
func (c *Catalog) Apply(e *Edit) (*Catalog, error) {
	put, del, err := e.sorted()
	if err != nil {
		return nil, err
	}
	n := &Catalog{SchemaVersion: SchemaVersion, DistributorVersion: e.Header.DistributorVersion,
		CreatedAt: e.Header.CreatedAt, UpdatedAt: e.Header.UpdatedAt}
	putAt := make(map[string]bool, len(put))
	for _, o := range put {
		putAt[o.Path] = true
	}
	if c != nil && !e.Fresh {
		for _, o := range c.Outputs {
			if !putAt[o.Path] && !del[o.Path] {
				n.Outputs = append(n.Outputs, o)
			}
		}
	}
	n.Outputs = append(n.Outputs, put...)
	sort.Slice(n.Outputs, func(i, j int) bool { return n.Outputs[i].Path < n.Outputs[j].Path })
	return n, nil
}
