package catalog

import (
	"bytes"
	"encoding/binary"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// parseCanonical decodes the record at the start of b only if it is exactly
// what appendOutput writes for it, returning its length brace to brace; 0
// (o unspecified) for any other layout. Every byte it accepts is checked, so
// it is valid JSON; it checks layout, not values (validateOutput does).
func parseCanonical(b []byte, o *Output, memo *canonMemo) int {
	p := canonParser{b: b, memo: memo}
	const in = "      "
	ok := p.lit("{\n") &&
		p.str(in+`"path": `, &o.Path, nil) &&
		p.str(",\n"+in+`"pipeline_id": `, &o.PipelineID, &memo.pipeline) &&
		p.str(",\n"+in+`"destination_id": `, &o.DestinationID, &memo.destination) &&
		p.lit(",\n"+in+"\"source\": {\n") &&
		p.str(in+`  "id": `, &o.Source.ID, &memo.sourceID) &&
		p.str(",\n"+in+`  "digest": `, &o.Source.Digest, &memo.sourceDigest) &&
		p.lit(",\n"+in+`  "created": `) && p.time(&o.Source.Created) &&
		p.lit("\n"+in+"},\n") &&
		p.str(in+`"kind": `, &o.Kind, &memo.kind) &&
		p.optStr(",\n"+in+`"source_path": `, &o.SourcePath) &&
		p.optStr(",\n"+in+`"transform": `, &o.Transform) &&
		p.optStr(",\n"+in+`"url": `, &o.URL) &&
		p.str(",\n"+in+`"sha256": `, &o.SHA256, nil) &&
		p.lit(",\n"+in+`"size": `) && p.size(&o.Size) &&
		p.lit(",\n"+in+`"created_at": `) && p.time(&o.CreatedAt) &&
		p.lit(",\n"+in+`"updated_at": `) && p.time(&o.UpdatedAt) &&
		p.lit(recordClose)
	if !ok {
		return 0
	}
	return len(b) - len(p.b)
}

// canonicalPath returns the path and length of the record at the start of
// b if it starts and ends as appendOutput writes one, else 0, without
// decoding the rest (a splicing ApplyTo copies a record of a base Scan validated).
func canonicalPath(b []byte) (path []byte, n int) {
	const open = "{\n      \"path\": \""
	if !bytes.HasPrefix(b, []byte(open)) {
		return nil, 0
	}
	i := closingQuote(b, len(open))
	if i >= len(b) {
		return nil, 0
	}
	path = b[len(open):i]
	if bytes.IndexByte(path, '\\') >= 0 {
		u, err := jsontext.AppendUnquote(nil, b[len(open)-1:i+1])
		if err != nil {
			return nil, 0
		}
		path = u
	}
	end := recordEnd(b[i:])
	if end < 0 {
		return nil, 0
	}
	return path, i + end + len(recordClose)
}

// recordClose is how appendOutput ends a record.
const recordClose = "\n    }"

// recordEnd is bytes.Index(b, recordClose), found from the closing braces
// (two in a record) rather than the line breaks (fourteen).
func recordEnd(b []byte) int {
	for off := 0; ; {
		j := bytes.IndexByte(b[off:], '}')
		if j < 0 {
			return -1
		}
		j += off
		if start := j + 1 - len(recordClose); start >= 0 && string(b[start:j+1]) == recordClose {
			return start
		}
		off = j + 1
	}
}

// closingQuote returns the index of the quote that ends the JSON string
// whose text starts at b[i], or at least len(b) when b ends first.
func closingQuote(b []byte, i int) int {
	for i < len(b) && b[i] != '"' {
		if b[i] == '\\' {
			i++
		}
		i++
	}
	return i
}

// canonMemo remembers the values the next records mostly repeat (owner,
// source, kind, timestamps), neither allocated nor parsed again.
type canonMemo struct {
	pipeline, destination, sourceID, sourceDigest, kind string
	times                                               [3]struct {
		raw [20]byte
		t   time.Time
	}
	next int // the times slot to fill next
}

// canonParser consumes the front of b.
type canonParser struct {
	b    []byte
	memo *canonMemo
}

func (p *canonParser) lit(s string) bool {
	if len(p.b) < len(s) || string(p.b[:len(s)]) != s {
		return false
	}
	p.b = p.b[len(s):]
	return true
}

// plainText reports whether appendString writes b as is: valid UTF-8 without control
// characters, U+2028 or U+2029 (eight bytes at a time while ASCII).
func plainText(b []byte) bool {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// A byte below 0x20 (it borrows) or from 0x80 (its top bit).
		if (x-lo)&^x&hi != 0 || x&hi != 0 {
			break
		}
	}
	ascii, rest := true, b[i:]
	for _, c := range rest {
		if c < 0x20 {
			return false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	return ascii || utf8.Valid(rest) && !bytes.Contains(rest, []byte("\u2028")) && !bytes.Contains(rest, []byte("\u2029"))
}

// str parses a string member (name: what precedes its value) in
// appendString's escaping, reusing memo (the previous record's value) when equal.
func (p *canonParser) str(name string, dst, memo *string) bool {
	if !p.lit(name) || len(p.b) < 2 || p.b[0] != '"' {
		return false
	}
	i := bytes.IndexByte(p.b[1:], '"')
	if i < 0 {
		return false
	}
	raw := p.b[1 : 1+i]
	if bytes.IndexByte(raw, '\\') < 0 {
		// No escapes: canonical when appendString leaves it as it is.
		if !plainText(raw) {
			return false
		}
		p.b = p.b[2+i:]
		if memo == nil {
			*dst = string(raw)
			return true
		}
		if *memo != string(raw) {
			*memo = string(raw)
		}
		*dst = *memo
		return true
	}
	// Escapes: accept the string only if encoding its value again gives
	// the same bytes.
	n := closingQuote(p.b, 1)
	if n >= len(p.b) {
		return false
	}
	q := p.b[:n+1]
	v, err := jsontext.AppendUnquote(nil, q)
	if err != nil || !bytes.Equal(appendString(nil, string(v)), q) {
		return false
	}
	p.b = p.b[n+1:]
	*dst = string(v)
	return true
}

// optStr parses an optional member: absent is "", present non-empty (Encode omits empty).
func (p *canonParser) optStr(name string, dst *string) bool {
	*dst = ""
	return !bytes.HasPrefix(p.b, []byte(name)) || p.str(name, dst, nil) && *dst != ""
}

func (p *canonParser) size(dst *int64) bool {
	n, i := int64(0), 0
	for ; i < len(p.b) && p.b[i] >= '0' && p.b[i] <= '9'; i++ {
		if i == 19 { // more digits than any int64 has
			return false
		}
		n = n*10 + int64(p.b[i]-'0')
	}
	if i == 0 || (i > 1 && p.b[0] == '0') || n < 0 {
		return false
	}
	*dst = n
	p.b = p.b[i:]
	return true
}

// time parses "YYYY-MM-DDTHH:MM:SSZ", the only form FormatTime writes.
func (p *canonParser) time(dst *time.Time) bool {
	const form = `"0000-00-00T00:00:00Z"`
	if len(p.b) < len(form) || p.b[0] != '"' || p.b[len(form)-1] != '"' {
		return false
	}
	s := p.b[1 : len(form)-1]
	for i := range p.memo.times {
		if m := &p.memo.times[i]; string(m.raw[:]) == string(s) && !m.t.IsZero() {
			*dst = m.t
			p.b = p.b[len(form):]
			return true
		}
	}
	var v [6]int
	for k, span := range [6][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}} {
		for _, c := range s[span[0]:span[1]] {
			if c < '0' || c > '9' {
				return false
			}
			v[k] = v[k]*10 + int(c-'0')
		}
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return false
	}
	// Refuse what time.Date normalised (a 31 April, a 60th second):
	// time.Parse refuses it too, and the general decoder says why.
	t := time.Date(v[0], time.Month(v[1]), v[2], v[3], v[4], v[5], 0, time.UTC)
	if y, mo, d := t.Date(); y != v[0] || int(mo) != v[1] || d != v[2] || t.Hour() != v[3] || t.Minute() != v[4] || t.Second() != v[5] {
		return false
	}
	m := &p.memo.times[p.memo.next]
	p.memo.next = (p.memo.next + 1) % len(p.memo.times)
	copy(m.raw[:], s)
	m.t = t
	*dst = t
	p.b = p.b[len(form):]
	return true
}
