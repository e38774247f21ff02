package journal

import (
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
