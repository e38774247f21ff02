package journal

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
)

func TestRoundTripAndRejects(t *testing.T) {
	now := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	rec := catalog.Output{Path: "a.txt", PipelineID: "p", DestinationID: "d", Kind: catalog.KindSource,
		SHA256: "sha256:" + strings.Repeat("a", 64), Size: 3, CreatedAt: now, UpdatedAt: now}
	j := &Journal{RunID: "r1", Command: "run", Started: now, BaseVersion: "v1", Ops: []Op{
		{Op: OpWrite, Path: "a.txt", SHA256: rec.SHA256, Size: 3, Record: &rec},
		{Op: OpDelete, Path: "b.txt"},
	}}
	data, err := Encode(j)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != "r1" || len(got.Ops) != 2 || got.Ops[0].Record.Path != "a.txt" || got.BaseVersion != "v1" {
		t.Errorf("round trip: %+v", got)
	}
	for name, doc := range map[string]string{
		"not json":        "{",
		"unknown field":   `{"journal_version":1,"ops":[],"extra":1}`,
		"future version":  `{"journal_version":2,"ops":[]}`,
		"write no record": `{"journal_version":1,"ops":[{"op":"write","path":"a","sha256":"sha256:` + strings.Repeat("a", 64) + `","size":1}]}`,
		"unknown op":      `{"journal_version":1,"ops":[{"op":"chmod","path":"a"}]}`,
	} {
		if _, err := Decode([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestStreamIsTheDocument: the stream's bytes are the journal marshaled
// whole (what recovery decodes), for no op, one and several, and again
// after a rewind.
func TestStreamIsTheDocument(t *testing.T) {
	now := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	rec := catalog.Output{Path: "a\u2028.txt", Kind: catalog.KindSource, SHA256: "sha256:" + strings.Repeat("a", 64), CreatedAt: now}
	ops := []Op{{Op: OpWrite, Path: "a\u2028.txt", SHA256: rec.SHA256, Size: 3, Record: &rec}, {Op: OpDelete, Path: "b"}, {Op: OpDelete, Path: "<c>"}}
	for n := range len(ops) + 1 {
		j := &Journal{FormatVersion: FormatVersion, RunID: "r", Command: "run", Started: now, BaseVersion: "v", Ops: ops[:n]}
		want, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewStream(j, n, func(i int) *Op { return &ops[i] })
		if err != nil {
			t.Fatal(err)
		}
		// A retried Put rewinds a stream it read part of.
		part := make([]byte, min(100, len(want)))
		if _, err := io.ReadFull(s, part); err != nil {
			t.Fatal(err)
		}
		if pos, err := s.Seek(0, io.SeekCurrent); pos != int64(len(part)) || err != nil {
			t.Fatalf("after %d bytes the stream says it is at %d (%v)", len(part), pos, err)
		}
		if _, err := s.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			var got bytes.Buffer
			if _, err := io.CopyBuffer(&got, s, make([]byte, 7)); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Fatalf("%d ops, round %d:\n got %s\nwant %s", n, round, got.Bytes(), want)
			}
			if pos, err := s.Seek(0, io.SeekCurrent); pos != int64(len(want)) || err != nil {
				t.Fatalf("at the end the stream says it is at %d (%v), not %d", pos, err, len(want))
			}
			if _, err := s.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
		}
	}
}
