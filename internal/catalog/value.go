package catalog

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/distributor-dev/distributor/internal/strictjson"
)

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
