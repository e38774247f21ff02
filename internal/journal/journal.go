// Package journal defines the intent journal (.distributor.journal) a
// writer keeps at a root while it changes outputs: every write with the
// bytes it leaves and the record it adds, and every delete. A journal the
// next writer finds means a run died, and tells recovery (txn.Recover)
// what may have happened.
package journal

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/strictjson"
)

// Name is the journal object's path at a destination root.
const Name = ".distributor.journal"

// FormatVersion is the journal format this package reads and writes.
const FormatVersion = 1

// Op kinds.
const (
	OpWrite  = "write"
	OpDelete = "delete"
)

// Journal records what one attempt intends to change.
type Journal struct {
	FormatVersion int       `json:"journal_version"`
	RunID         string    `json:"run_id"`
	Command       string    `json:"command"`
	Started       time.Time `json:"started_at"`
	// BaseVersion is the catalog's version the attempt read ("" for none):
	// a different one at recovery means the attempt committed.
	BaseVersion string `json:"base_version"`
	Ops         []Op   `json:"ops"`
}

// Op is one intended change.
type Op struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	// Existed says the path held an object when the attempt planned: a
	// completed write replaced it (roll forward), else created it (remove).
	Existed bool `json:"existed,omitempty"`
	// SHA256 and Size are the bytes a completed write leaves.
	SHA256 string          `json:"sha256,omitempty"`
	Size   int64           `json:"size,omitempty"`
	Record *catalog.Output `json:"record,omitempty"` // the catalog record a completed write stands for
}

// Encode serialises j.
func Encode(j *Journal) ([]byte, error) {
	s, err := NewStream(j, len(j.Ops), func(i int) *Op { return &j.Ops[i] })
	if err != nil {
		return nil, err
	}
	return io.ReadAll(s)
}

// Stream is a journal's encoding (Encode's bytes), made op by op as it is
// read: it holds one op's bytes whatever the journal's size (a first
// publish of a million files journals a million records). Seek rewinds it,
// as a compare-and-swap Put may.
type Stream struct {
	head []byte
	n, i int
	op   func(i int) *Op
	buf  []byte
	off  int64 // bytes read since the start
}

// NewStream streams j's header with the n ops op returns in place of j.Ops.
func NewStream(j *Journal, n int, op func(i int) *Op) (*Stream, error) {
	h := *j
	h.FormatVersion, h.Ops = FormatVersion, []Op{}
	head, err := json.Marshal(&h)
	if err != nil {
		return nil, fmt.Errorf("encode journal: %w", err)
	}
	return &Stream{head: head[:len(head)-2], n: n, op: op, i: -1}, nil // without "]}"
}

// Read implements io.Reader.
func (s *Stream) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		switch s.i++; {
		case s.i == 0:
			s.buf = s.head
		case s.i <= s.n:
			b, err := json.Marshal(s.op(s.i - 1))
			if err != nil {
				return 0, fmt.Errorf("encode journal: %w", err)
			}
			if s.i > 1 {
				b = append([]byte{','}, b...)
			}
			s.buf = b
		case s.i == s.n+1:
			s.buf = []byte("]}")
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, s.buf)
	s.buf, s.off = s.buf[n:], s.off+int64(n)
	return n, nil
}

// Seek rewinds (Seek(0, io.SeekStart)) or tells where the stream is
// (Seek(0, io.SeekCurrent)), nothing else.
func (s *Stream) Seek(offset int64, whence int) (int64, error) {
	switch {
	case offset == 0 && whence == io.SeekCurrent:
		return s.off, nil
	case offset != 0 || whence != io.SeekStart:
		return 0, fmt.Errorf("journal stream: seek %d/%d: only a rewind is supported", offset, whence)
	}
	s.i, s.buf, s.off = -1, nil, 0
	return 0, nil
}

// Decode parses a journal strictly, refusing a journal_version not
// FormatVersion, an unknown op and a write without valid record, sha256, size.
//
// Strict on purpose: recovery deletes files on the journal's word, so it
// must act only on a journal that says exactly one thing, not on a guess
// (which of two "path" members? a path whose invalid bytes became U+FFFD
// names another file). A journal that does not decode stops every writer
// at recovery, nothing changed, until someone inspects the root
// (docs/operations.md, "An unreadable journal").
func Decode(data []byte) (*Journal, error) {
	var j Journal
	if err := strictjson.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("decode journal: %w", err)
	}
	if j.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("decode journal: journal_version %d is not %d", j.FormatVersion, FormatVersion)
	}
	for i, op := range j.Ops {
		switch {
		case op.Op == OpWrite && (op.Record == nil || bundle.CheckSHA256(op.SHA256) != nil || op.Size < 0):
			return nil, fmt.Errorf("decode journal: ops[%d] (%s): write without a valid record, sha256 and size", i, op.Path)
		case op.Op != OpWrite && op.Op != OpDelete:
			return nil, fmt.Errorf("decode journal: ops[%d]: unknown op %q", i, op.Op)
		}
	}
	return &j, nil
}
