package catalog

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/distributor-dev/distributor/internal/strictjson"
)

// reader is the one catalog reader: Scan, ScanCanonical, Parse, Read,
// ApplyTo and Splice all read through it. It walks the document's
// structure itself (objects, arrays, names, commas, white space, exactly
// as strict JSON allows them) over a window of the input, so that memory
// does not grow with the document. A record in Encode's layout is decoded
// in one pass over its bytes (parseCanonical), which checks every byte;
// any other value is read whole by the strict JSON decoder
// (internal/strictjson) and decoded from its bytes. Problems name their
// field and their byte offset in the document.
type reader struct {
	src  io.Reader
	b    []byte // the window: b[i:] is not yet consumed
	i    int
	off  int64 // the document offset of b[0]
	eof  bool
	rerr error // the source's read error, if any

	dec  *jsontext.Decoder // reads one value at a time, from feed
	opts jsontext.Options
	feed feeder
	memo canonMemo

	// whole reads like Parse: records in any order (each path once), and
	// every problem with the values collected instead of the first
	// returned.
	whole bool
	// copy hands records in Encode's layout to fn as their bytes,
	// undecoded (Splice: the base was validated when it was scanned).
	copy bool
	fn   func(o *Output, path, raw []byte) error

	h         Header
	n         int
	last      []byte         // the last record's path
	canonical bool           // every record so far in Encode's layout
	seen      map[string]int // whole: record index by path
	problems  []error        // whole: values missing or unreadable
	invalid   []error        // whole: values breaking a rule
}

// windowSize is the reader's window; it grows for a longer value.
const windowSize = 512 << 10

// maxFastRecord bounds the bytes of a record decoded in one pass; a longer
// record is read by the strict decoder.
const maxFastRecord = 64 << 10

// newReader returns a reader of src, or when src is nil of data, read in
// place.
func newReader(src io.Reader, data []byte, fn func(o *Output, path, raw []byte) error) *reader {
	r := &reader{src: src, fn: fn, canonical: true}
	if src != nil {
		r.b = make([]byte, 0, windowSize)
	} else {
		r.b, r.eof = data[:len(data):len(data)], true
	}
	r.feed.r = r
	r.dec = strictjson.NewDecoder(&r.feed)
	r.opts = r.dec.Options()
	return r
}

// errStop is how a callback's error travels through the reader unchanged.
type errStop struct{ err error }

func (e *errStop) Error() string { return e.err.Error() }
func (e *errStop) Unwrap() error { return e.err }

// read reads the document. It returns a *strictjson.Error for text that
// is not a strict JSON catalog document, the problems with the values
// (joined), or an *errStop.
func (r *reader) read() error {
	c, err := r.next("")
	if err != nil {
		return err
	}
	if c == '{' {
		r.i++
		err = r.members()
	} else {
		// null reads as an object without members; for anything else,
		// what strict JSON says of it.
		v, start, verr := r.value("")
		if err = verr; err == nil && v.Kind() != 'n' {
			var obj struct{}
			return r.decode("", v, start, &obj)
		}
		r.header(0, nil, false)
	}
	if err != nil {
		return err
	}
	if more, err := r.skip(); err != nil {
		return err
	} else if more {
		return r.syntax("", "unexpected data after top-level value")
	}
	return errors.Join(append(r.problems, r.invalid...)...)
}

// members reads the top-level members up to the closing brace, then
// checks the ones that must be there.
func (r *reader) members() error {
	var seen [len(topNames)]bool
	var version int
	var state *wireState
	var outputs bool
	for first := true; ; first = false {
		more, err := r.delimiter("", '}', first, "object value")
		if err != nil {
			return err
		}
		if !more {
			break
		}
		name, at, err := r.name("")
		if err != nil {
			return err
		}
		k := topIndex(name)
		if k < 0 {
			return &strictjson.Error{Reason: "unknown field " + strconv.Quote(name), Offset: at}
		}
		if seen[k] {
			return &strictjson.Error{Field: name, Reason: "duplicate field", Offset: at}
		}
		seen[k] = true
		if err := r.colon(name); err != nil {
			return err
		}
		switch name {
		case "schema_version":
			if err = r.member(name, &version); err == nil && !r.whole && version != SchemaVersion {
				err = fmt.Errorf("schema_version: %d is not %d", version, SchemaVersion)
			}
		case "distributor_version":
			err = r.member(name, &r.h.DistributorVersion)
		case "created_at":
			r.h.CreatedAt, err = r.timeMember(name)
		case "updated_at":
			r.h.UpdatedAt, err = r.timeMember(name)
		case "state":
			err = r.member(name, &state)
		case "outputs":
			outputs, err = r.outputs()
		}
		if err != nil {
			return err
		}
	}
	r.header(version, state, outputs)
	return nil
}

// topNames are the members of the document.
var topNames = [...]string{"schema_version", "distributor_version", "created_at", "updated_at", "state", "outputs"}

func topIndex(name string) int {
	for k, n := range topNames {
		if n == name {
			return k
		}
	}
	return -1
}

// header adds the problems of the document-level members.
func (r *reader) header(version int, state *wireState, outputs bool) {
	add := func(list *[]error, format string, args ...any) { *list = append(*list, fmt.Errorf(format, args...)) }
	var head []error
	if r.h.CreatedAt.IsZero() {
		add(&head, "created_at: missing")
	}
	if r.h.UpdatedAt.IsZero() {
		add(&head, "updated_at: missing")
	}
	if state == nil {
		add(&head, "state: missing")
	} else if state.Mode != ModeCatalog {
		add(&head, "state.mode: %q is not %q", state.Mode, ModeCatalog)
	}
	if !outputs {
		add(&head, "outputs: missing (an empty list is [])")
	}
	var rules []error
	if version != SchemaVersion {
		add(&rules, "schema_version: %d is not %d", version, SchemaVersion)
	}
	if r.h.CreatedAt.IsZero() {
		add(&rules, "created_at: missing")
	}
	if r.h.UpdatedAt.IsZero() {
		add(&rules, "updated_at: missing")
	}
	r.problems = append(head, r.problems...)
	r.invalid = append(rules, r.invalid...)
}

// member reads the value of the top-level member name into dst.
func (r *reader) member(name string, dst any) error {
	v, start, err := r.value(name)
	if err != nil {
		return err
	}
	return r.decode(name, v, start, dst)
}

// timeMember reads a top-level timestamp.
func (r *reader) timeMember(name string) (time.Time, error) {
	var s string
	if err := r.member(name, &s); err != nil {
		return time.Time{}, err
	}
	return parseTime(s, name, func(format string, args ...any) { r.problems = append(r.problems, fmt.Errorf(format, args...)) }), nil
}

// outputs reads the outputs member's value; present is false for null.
func (r *reader) outputs() (present bool, err error) {
	c, err := r.next("outputs")
	if err != nil {
		return false, err
	}
	if c != '[' {
		v, start, err := r.value("outputs")
		if err != nil || v.Kind() == 'n' {
			return false, err
		}
		var list []wireOutput
		return false, r.decode("outputs", v, start, &list)
	}
	r.i++
	for first := true; ; first = false {
		more, err := r.delimiter("outputs", ']', first, "array element")
		if err != nil || !more {
			return err == nil, err
		}
		if err := r.record(); err != nil {
			return false, err
		}
	}
}

// record reads the next record: in one pass when it is in Encode's layout,
// by the strict decoder otherwise; then checks and hands it over.
func (r *reader) record() error {
	r.fill(maxFastRecord)
	f := field(r.n)
	if r.copy {
		if path, n := canonicalPath(r.b[r.i:]); n > 0 {
			raw := r.b[r.i : r.i+n]
			if err := order(r, path, f); err != nil {
				return err
			}
			r.i += n
			return r.hand(nil, path, raw)
		}
	}
	if !startsValue(r.b[r.i]) {
		return r.syntax("outputs", "invalid character "+r.quoteNext()+" at start of value")
	}
	o := new(Output)
	var probs []error
	if n := parseCanonical(r.b[r.i:], o, &r.memo); n > 0 {
		r.i += n
	} else {
		r.canonical = false
		*o = Output{}
		v, start, err := r.value(f.String())
		if err != nil {
			return err
		}
		if probs, err = r.decodeRecord(v, start, f, o); err != nil {
			return err
		}
	}
	validateOutput(o, f, func(format string, args ...any) { probs = append(probs, fmt.Errorf(format, args...)) })
	if err := order(r, o.Path, f); err != nil {
		return err
	}
	if len(probs) > 0 {
		if !r.whole {
			return errors.Join(probs...)
		}
		r.invalid = append(r.invalid, probs...)
		r.n++
		return nil
	}
	return r.hand(o, nil, nil)
}

// order checks the record's path against the ones before it: increasing,
// or in whole mode unique.
func order[P string | []byte](r *reader, path P, f field) error {
	if r.whole {
		if j, dup := r.seen[string(path)]; dup {
			r.invalid = append(r.invalid, fmt.Errorf("%s.path: %q duplicates outputs[%d]", f, path, j))
		} else {
			if r.seen == nil {
				r.seen = map[string]int{}
			}
			r.seen[string(path)] = r.n
		}
		return nil
	}
	if r.n > 0 && string(path) <= string(r.last) {
		if string(path) == string(r.last) {
			return fmt.Errorf("%s.path: %q duplicates outputs[%d]", f, path, r.n-1)
		}
		return fmt.Errorf("%s.path: %q after %q: %w", f, path, r.last, ErrUnsorted)
	}
	r.last = append(r.last[:0], path...)
	return nil
}

// hand gives a record to the callback.
func (r *reader) hand(o *Output, path, raw []byte) error {
	r.n++
	if err := r.fn(o, path, raw); err != nil {
		return &errStop{err}
	}
	return nil
}

// decodeRecord decodes a record that is not in Encode's layout from its
// bytes v, which start at the document offset start; it returns the
// problems with its values.
func (r *reader) decodeRecord(v jsontext.Value, start int64, f field, o *Output) ([]error, error) {
	var w wireOutput
	if err := r.decode(f.String(), v, start, &w); err != nil {
		return nil, err
	}
	var probs []error
	add := func(format string, args ...any) { probs = append(probs, fmt.Errorf(f.String()+"."+format, args...)) }
	*o = Output{Path: w.Path, PipelineID: w.PipelineID, DestinationID: w.DestinationID,
		Kind: w.Kind, SourcePath: w.SourcePath, Transform: w.Transform, URL: w.URL, SHA256: w.SHA256}
	if w.Source == nil {
		add("source: missing")
	} else {
		o.Source = Source{ID: w.Source.ID, Digest: w.Source.Digest}
		o.Source.Created = parseTime(w.Source.Created, "source.created", add)
	}
	if w.Size == nil {
		add("size: missing")
	} else {
		o.Size = *w.Size
	}
	o.CreatedAt = parseTime(w.CreatedAt, "created_at", add)
	o.UpdatedAt = parseTime(w.UpdatedAt, "updated_at", add)
	return probs, nil
}

// wireOutput is a record as the strict decoder reads it.
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

type wireState struct {
	Mode string `json:"mode"`
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

// name reads an object member name (after white space); at is its offset.
func (r *reader) name(where string) (string, int64, error) {
	c, err := r.next(where)
	if err != nil {
		return "", 0, err
	}
	at := r.pos()
	if c != '"' {
		if startsValue(c) {
			return "", at, r.syntax(where, "object member name must be a string")
		}
		return "", at, r.syntax(where, "invalid character "+r.quoteNext()+" at start of value")
	}
	// The names distributor writes need no escapes: read them in place.
	if j := indexQuote(r.b[r.i+1:]); j >= 0 && plainText(r.b[r.i+1:r.i+1+j]) {
		name := string(r.b[r.i+1 : r.i+1+j])
		r.i += j + 2
		return name, at, nil
	}
	v, start, err := r.value(where)
	if err != nil {
		return "", at, err
	}
	var name string
	return name, at, r.decode(where, v, start, &name)
}

// startsValue reports whether a JSON value can start with c.
func startsValue(c byte) bool {
	return strings.IndexByte(`{["-0123456789tfn`, c) >= 0
}

// indexQuote returns the index of the first '"' or '\\' in b if it is a
// '"', else -1.
func indexQuote(b []byte) int {
	for j, c := range b {
		switch c {
		case '"':
			return j
		case '\\':
			return -1
		}
	}
	return -1
}

// colon reads the colon after the member name.
func (r *reader) colon(name string) error {
	c, err := r.next(name)
	if err != nil {
		return err
	}
	if c != ':' {
		return r.syntax(name, "invalid character "+r.quoteNext()+" after object name (expecting ':')")
	}
	r.i++
	return nil
}

// value reads the next JSON value whole with the strict decoder and
// returns it with its document offset; where names it in problems.
func (r *reader) value(where string) (jsontext.Value, int64, error) {
	if _, err := r.next(where); err != nil {
		return nil, 0, err
	}
	start := r.pos()
	r.feed.n = 0
	r.dec.Reset(&r.feed, r.opts)
	v, err := r.dec.ReadValue()
	if err != nil {
		if r.rerr != nil {
			return nil, start, r.rerr
		}
		return nil, start, r.explain(where, r.b[r.i:r.i+r.feed.n], start, err)
	}
	r.i += r.feed.n - len(r.dec.UnreadBuffer())
	return v, start, nil
}

// decode decodes the value v read at offset start into dst strictly.
func (r *reader) decode(where string, v jsontext.Value, start int64, dst any) error {
	if err := strictjson.Unmarshal(v, dst); err != nil {
		return r.explain(where, v, start, err)
	}
	return nil
}

// explain describes a strict decoder's error about data, which starts at
// the document offset start and is the value named where.
func (r *reader) explain(where string, data []byte, start int64, err error) error {
	e := strictjson.Explain(err, data)
	if rest, ok := strings.CutPrefix(e.Reason, "the document must be "); ok && where != "" {
		// Not the document: one of its values.
		e.Reason = "must be " + strings.Replace(rest, "a JSON object", "an object", 1)
	}
	switch {
	case where == "":
	case e.Field == "":
		e.Field = where
	case e.Field[0] == '[':
		e.Field = where + e.Field
	default:
		e.Field = where + "." + e.Field
	}
	if e.Offset >= 0 {
		e.Offset += start
	}
	e.Line, e.Column = 0, 0
	return e
}

// syntax is a grammar error at the next byte, inside the value named where.
func (r *reader) syntax(where, reason string) error {
	return &strictjson.Error{Field: where, Reason: reason, Offset: r.pos(), Syntax: true}
}

// quoteNext quotes the next character as strict JSON's messages do.
func (r *reader) quoteNext() string {
	r.fill(utf8.UTFMax)
	b := r.b[r.i:]
	c, n := utf8.DecodeRune(b)
	if c == utf8.RuneError && n == 1 {
		return `'\x` + strconv.FormatUint(uint64(b[0]), 16) + `'`
	}
	return strconv.QuoteRune(c)
}

// pos is the document offset of the next byte.
func (r *reader) pos() int64 { return r.off + int64(r.i) }

// next skips white space and returns the next byte; the end of the input
// is an error there, inside the value named where.
func (r *reader) next(where string) (byte, error) {
	more, err := r.skip()
	if err == nil && !more {
		err = r.syntax(where, "unexpected end of input")
	}
	if err != nil {
		return 0, err
	}
	return r.b[r.i], nil
}

// skip skips white space and reports whether more input follows.
func (r *reader) skip() (bool, error) {
	for {
		for r.i < len(r.b) {
			switch r.b[r.i] {
			case ' ', '\t', '\n', '\r':
				r.i++
			default:
				return true, nil
			}
		}
		if !r.fill(1) {
			return false, r.rerr
		}
	}
}

// delimiter reads what comes before the next element of an object or
// array (the value named where, closed by end): nothing before the first,
// a comma before the others. more is false at the closing end, which it
// consumes.
func (r *reader) delimiter(where string, end byte, first bool, after string) (more bool, err error) {
	c, err := r.next(where)
	if err != nil {
		return false, err
	}
	if c == end {
		r.i++
		return false, nil
	}
	if first {
		return true, nil
	}
	if c != ',' {
		return false, r.syntax(where, "invalid character "+r.quoteNext()+" after "+after+" (expecting ',' or '"+string(end)+"')")
	}
	comma := r.pos()
	r.i++
	if c, err = r.next(where); err != nil {
		return false, err
	}
	if c == end {
		// A trailing comma, reported where strict JSON reports it.
		return false, &strictjson.Error{Field: where, Reason: "invalid character ',' at start of value", Offset: comma, Syntax: true}
	}
	return true, nil
}

// fill reads until the window holds n unconsumed bytes or the input ends;
// it reports whether it holds them. Bytes before r.i may be dropped, and
// the window grows when it is full of unconsumed bytes.
func (r *reader) fill(n int) bool {
	for len(r.b)-r.i < n && !r.eof {
		if len(r.b) == cap(r.b) {
			k := copy(r.b, r.b[r.i:])
			r.off += int64(r.i)
			r.b, r.i = r.b[:k], 0
			if k == cap(r.b) {
				r.b = append(make([]byte, 0, max(2*k, windowSize)), r.b...)
			}
		}
		m, err := r.src.Read(r.b[len(r.b):cap(r.b)])
		r.b = r.b[:len(r.b)+m]
		if err == io.EOF {
			r.eof = true
		} else if err != nil {
			r.eof, r.rerr = true, err
		}
	}
	return len(r.b)-r.i >= n
}

// feeder gives the strict decoder the window's bytes from r.i on, a little
// at a time so that it reads little past the value it decodes; n counts
// the bytes it gave.
type feeder struct {
	r *reader
	n int
}

func (f *feeder) Read(p []byte) (int, error) {
	r := f.r
	if !r.fill(f.n + 1) {
		if r.rerr != nil {
			return 0, r.rerr
		}
		if r.i+f.n >= len(r.b) {
			return 0, io.EOF
		}
	}
	k := copy(p[:min(len(p), 4096)], r.b[r.i+f.n:])
	f.n += k
	return k, nil
}
