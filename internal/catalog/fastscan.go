package catalog

import (
	"bufio"
	"bytes"
)

// resumePoint is where the fast path of a scan stopped: the document is
// either done, or it departs from Encode's layout and the general decoder
// goes on from there. It goes on from the bytes the fast path read but did
// not take (pending), after a made-up prefix that puts the decoder in the
// state the fast path had reached: at the document's start, or inside the
// outputs array, where a placeholder element stands for the records
// already given to the callback.
type resumePoint struct {
	done      bool
	inOutputs bool
	header    Header // read by the fast path when inOutputs
	pending   []byte
}

// prefix is what the general decoder reads before pending.
func (p *resumePoint) prefix(records int) string {
	switch {
	case !p.inOutputs:
		return ""
	case records > 0:
		return `{"outputs":[0`
	}
	return `{"outputs":[`
}

// maxFastRecord bounds the bytes the fast path holds for one record; a
// longer record is left to the general decoder.
const maxFastRecord = 64 << 10

// lineReader reads lines into pending, the bytes not yet taken.
type lineReader struct {
	br      *bufio.Reader
	pending []byte
}

// line reads the next line into pending and returns it; ok is false at the
// end of the input or for a line longer than the buffer (the partial line
// stays in pending for the general decoder).
func (lr *lineReader) line() ([]byte, bool) {
	l, err := lr.br.ReadSlice('\n')
	start := len(lr.pending)
	lr.pending = append(lr.pending, l...)
	return lr.pending[start:], err == nil
}

// take drops the pending bytes before i: they were taken.
func (lr *lineReader) take(i int) {
	lr.pending = append(lr.pending[:0], lr.pending[i:]...)
}

// fast reads the document for as long as it is laid out exactly as Encode
// writes it, one line at a time, giving each record to the callback. It
// returns with s.resume set: done, or where the general decoder goes on.
func (s *scanner) fast(br *bufio.Reader) error {
	lr := &lineReader{br: br}
	defer func() { s.resume.pending = lr.pending }()
	h, empty, ok := s.fastHeader(lr)
	if !ok {
		return nil
	}
	// Resume from just after the outputs' "[".
	s.resume.inOutputs, s.resume.header = true, h
	lr.take(bytes.LastIndexByte(lr.pending, '[') + 1)
	if !empty {
		for more := true; ; {
			l, ok := lr.line()
			if !ok {
				return nil
			}
			if string(l) == "  ]\n" && !more {
				break
			}
			if string(l) != "    {\n" || !more {
				return nil
			}
			start := len(lr.pending) - 2 // the record's "{"
			for {
				if l, ok = lr.line(); !ok || len(lr.pending)-start > maxFastRecord {
					return nil
				}
				if string(l) == "    }\n" || string(l) == "    },\n" {
					break
				}
			}
			more = l[5] == ','
			end := len(lr.pending) - len(l) + 5 // just after the "}"
			raw := lr.pending[start:end]
			o := new(Output)
			if !parseCanonical(raw, o, &s.memo) {
				return nil
			}
			if err := s.record(o, raw, true); err != nil {
				return err
			}
			lr.take(end)
		}
	}
	if l, ok := lr.line(); !ok || string(l) != "}\n" {
		return nil
	}
	if _, err := br.ReadByte(); err == nil {
		br.UnreadByte()
		return nil // trailing data: the general decoder says what
	}
	s.resume.done = true
	return nil
}

// fastHeader reads the members before the outputs in Encode's layout, up
// to and including the line that opens them; empty says it closes them
// too ("outputs": []).
func (s *scanner) fastHeader(lr *lineReader) (h Header, empty, ok bool) {
	next := func() canonParser {
		l, ok := lr.line()
		if !ok {
			l = nil
		}
		return canonParser{b: l, memo: &s.memo}
	}
	whole := func(p canonParser, ok bool) bool { return ok && len(p.b) == 0 }
	if p := next(); !whole(p, p.lit("{\n")) {
		return h, false, false
	}
	if p := next(); !whole(p, p.lit("  \"schema_version\": 4,\n")) {
		return h, false, false
	}
	p := next()
	if bytes.HasPrefix(p.b, []byte(`  "distributor_version": `)) {
		if !whole(p, p.str(`  "distributor_version": `, &h.DistributorVersion, true, nil)) || h.DistributorVersion == "" {
			return h, false, false
		}
		p = next()
	}
	if !whole(p, p.time(`  "created_at": `, &h.CreatedAt, true)) {
		return h, false, false
	}
	if p := next(); !whole(p, p.time(`  "updated_at": `, &h.UpdatedAt, true)) {
		return h, false, false
	}
	for _, lit := range []string{"  \"state\": {\n", "    \"mode\": \"catalog\"\n", "  },\n"} {
		if p := next(); !whole(p, p.lit(lit)) {
			return h, false, false
		}
	}
	switch l, _ := lr.line(); string(l) {
	case "  \"outputs\": [\n":
		return h, false, true
	case "  \"outputs\": []\n":
		return h, true, true
	}
	return h, false, false
}
