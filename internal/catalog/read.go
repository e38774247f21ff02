package catalog

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/distributor-dev/distributor/internal/strictjson"
)

// reader is the one catalog reader (docs/design.md, "Decode a large
// catalog once"): it walks the document over a window of the input,
// decodes a record in Encode's layout in one pass (parseCanonical) and any
// other value with the strict decoder. Problems name field and offset.
type reader struct {
	src  io.Reader
	b    []byte // the window: b[i:] is not yet consumed
	i    int
	off  int64 // the document offset of b[0]
	eof  bool
	rerr error // the source's read error, if any

	dec   *jsontext.Decoder // reads one value at a time, from feed
	opts  jsontext.Options
	feed  feeder
	memo  canonMemo
	owner ownerMemo // validateOutput's

	whole   bool   // read like Parse: records in any order, every value problem collected
	copy    bool   // hand records in Encode's layout to fn undecoded (ApplyTo splicing)
	scratch Output // every record decoded, which fn may not keep
	fn      func(o *Output, path, raw []byte) error
	stop    error // fn's error, which ends the read and is returned as is

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

// maxFastRecord bounds a record decoded in one pass; the strict decoder
// reads a longer one.
const maxFastRecord = 64 << 10

func newReader(src io.Reader, fn func(o *Output, path, raw []byte) error) *reader {
	r := &reader{src: src, fn: fn, canonical: true, b: make([]byte, 0, windowSize)}
	r.feed.r = r
	r.dec = strictjson.NewDecoder(&r.feed)
	r.opts = r.dec.Options()
	return r
}

// read reads the document, returning a *strictjson.Error for text not a strict
// JSON catalog, the values' problems joined, or fn's error.
func (r *reader) read() error {
	c, err := r.next("")
	if err != nil {
		return err
	}
	if c == '{' {
		r.i++
		err = r.members()
	} else if err = r.value("", &struct{}{}); err == nil {
		r.header(0, nil, false) // null: an object without members
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

func (r *reader) members() error {
	var seen [len(topNames)]bool
	var version int
	var state *wireState
	var outputs bool
	var times [2]string
	dst := [len(topNames)]any{&version, &r.h.DistributorVersion, &times[0], &times[1], &state}
	for first := true; ; first = false {
		more, err := r.delimiter("", '}', first, "object value")
		if err != nil {
			return err
		}
		if !more {
			break
		}
		at := r.pos() // of the name, the next byte (delimiter read it)
		if c := r.b[r.i]; c != '"' && startsValue(c) {
			return r.syntax("", "object member name must be a string")
		} else if c != '"' {
			return r.syntax("", "invalid character "+r.quoteNext()+" at start of value")
		}
		var name string
		if err := r.value("", &name); err != nil {
			return err
		}
		k := slices.Index(topNames[:], name)
		if k < 0 {
			return &strictjson.Error{Reason: "unknown field " + strconv.Quote(name), Offset: at}
		}
		if seen[k] {
			return &strictjson.Error{Field: name, Reason: "duplicate field", Offset: at}
		}
		seen[k] = true
		if c, err := r.next(name); err != nil {
			return err
		} else if c != ':' {
			return r.syntax(name, "invalid character "+r.quoteNext()+" after object name (expecting ':')")
		}
		r.i++
		if name == "outputs" {
			outputs, err = r.outputs()
		} else {
			err = r.value(name, dst[k])
		}
		switch {
		case err != nil:
			return err
		case k == 0 && !r.whole && version != SchemaVersion:
			return fmt.Errorf("schema_version: %d is not %d", version, SchemaVersion)
		case k == 2 || k == 3: // created_at, updated_at
			*[2]*time.Time{&r.h.CreatedAt, &r.h.UpdatedAt}[k-2] = parseTime(times[k-2], name,
				func(format string, args ...any) { r.problems = append(r.problems, fmt.Errorf(format, args...)) })
		}
	}
	r.header(version, state, outputs)
	return nil
}

// topNames are the members of the document.
var topNames = [...]string{"schema_version", "distributor_version", "created_at", "updated_at", "state", "outputs"}

// header puts the document-level problems ahead of the records' (decoding's,
// then the rules' as Validate states them).
func (r *reader) header(version int, state *wireState, outputs bool) {
	var head []error
	if r.h.CreatedAt.IsZero() {
		head = append(head, errors.New("created_at: missing"))
	}
	if r.h.UpdatedAt.IsZero() {
		head = append(head, errors.New("updated_at: missing"))
	}
	if state == nil {
		head = append(head, errors.New("state: missing"))
	} else if state.Mode != ModeCatalog {
		head = append(head, fmt.Errorf("state.mode: %q is not %q", state.Mode, ModeCatalog))
	}
	if !outputs {
		head = append(head, errors.New("outputs: missing (an empty list is [])"))
	}
	r.problems = append(head, r.problems...)
	if err := Validate(&Catalog{SchemaVersion: version, CreatedAt: r.h.CreatedAt, UpdatedAt: r.h.UpdatedAt}); err != nil {
		r.invalid = append([]error{err}, r.invalid...)
	}
}

// outputs reads the outputs member's value; present is false for null.
func (r *reader) outputs() (present bool, err error) {
	c, err := r.next("outputs")
	if err != nil {
		return false, err
	}
	if c != '[' {
		return false, r.value("outputs", new([]wireOutput)) // null: absent
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

// record reads, checks and hands over the next record.
func (r *reader) record() error {
	r.fill(maxFastRecord)
	f := field(r.n)
	if r.copy {
		if path, n := canonicalPath(r.b[r.i:]); n > 0 {
			if err := order(r, path, f); err != nil {
				return err
			}
			r.i += n
			r.n++
			r.stop = r.fn(nil, path, r.b[r.i-n:r.i])
			return r.stop
		}
	}
	if !startsValue(r.b[r.i]) {
		return r.syntax("outputs", "invalid character "+r.quoteNext()+" at start of value")
	}
	o := &r.scratch // every field set below
	var probs []error
	if n := parseCanonical(r.b[r.i:], o, &r.memo); n > 0 {
		r.i += n
	} else { // another layout: the strict decoder reads it
		r.canonical = false
		var w wireOutput
		if err := r.value(f.String(), &w); err != nil {
			return err
		}
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
	}
	validateOutput(o, f, func(format string, args ...any) { probs = append(probs, fmt.Errorf(format, args...)) }, &r.owner)
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
	r.n++
	r.stop = r.fn(o, nil, nil)
	return r.stop
}

// order checks that the record's path increases (whole: is unique).
func order[P string | []byte](r *reader, path P, f field) error {
	if r.whole {
		if j, dup := r.seen[string(path)]; dup {
			r.invalid = append(r.invalid, fmt.Errorf("%s.path: %q duplicates outputs[%d]", f, path, j))
		} else {
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

func startsValue(c byte) bool {
	return strings.IndexByte(`{["-0123456789tfn`, c) >= 0
}

// value reads the next strict JSON value into dst; where names it in problems.
func (r *reader) value(where string, dst any) error {
	if _, err := r.next(where); err != nil {
		return err
	}
	start := r.pos()
	r.feed.n = 0
	r.dec.Reset(&r.feed, r.opts)
	v, err := r.dec.ReadValue()
	if err != nil {
		if r.rerr != nil {
			return r.rerr
		}
		return r.explain(where, r.b[r.i:r.i+r.feed.n], start, err)
	}
	r.i += r.feed.n - len(r.dec.UnreadBuffer())
	if err := strictjson.Unmarshal(v, dst); err != nil {
		return r.explain(where, v, start, err)
	}
	return nil
}

// explain describes a strict decoder's error about data, the value where at start.
func (r *reader) explain(where string, data []byte, start int64, err error) error {
	e := strictjson.Explain(err, data)
	if rest, ok := strings.CutPrefix(e.Reason, "the document must be "); ok && where != "" {
		// Not the document: one of its values.
		e.Reason = "must be " + strings.Replace(rest, "a JSON object", "an object", 1)
	}
	e.Field = strictjson.JoinField(where, e.Field)
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
// is an error inside the value named where.
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

// delimiter reads what precedes the next element of the object or array
// named where (a comma but before the first); at end it consumes it, false.
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

// fill reads until the window holds n unconsumed bytes (reported) or the
// input ends; bytes before r.i may be dropped, a full window grows.
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

// feeder gives the strict decoder the window from r.i on, a little at a
// time so that it reads little past its value; n counts the bytes given.
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
