package report

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// passSource is a StateSource of outs that records what its writer held
// when each pass over the records began.
type passSource struct {
	outs   []catalog.Output
	out    *strings.Builder
	before []string // the output written before each pass
}

func (p *passSource) Outputs(fn func(*catalog.Output) error) error {
	p.before = append(p.before, p.out.String())
	for i := range p.outs {
		o := p.outs[i]
		if err := fn(&o); err != nil {
			return err
		}
	}
	return nil
}

func (p *passSource) WriteRaw(w io.Writer) error { return errors.New("not the text table's") }
func (p *passSource) Close() error               { return nil }

// TestStateTextStreams: the state table is written in two passes over the
// records, holding none: the lines from the catalog's top fields are out
// before the first pass (which measures the columns and counts the
// owners' outputs), and only the second writes rows.
func TestStateTextStreams(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var out strings.Builder
	src := &passSource{out: &out}
	for _, p := range []string{"a.html", "b/c.html"} {
		src.outs = append(src.outs, catalog.Output{Path: p, PipelineID: "p", DestinationID: "d", Kind: catalog.KindSource, Size: 3, UpdatedAt: t0})
	}
	s := &StateShow{Target: Target{Command: "state show", PipelineID: "p", DestinationID: "d", Root: "/www"},
		State: "catalog", SchemaVersion: catalog.SchemaVersion, Header: catalog.Header{CreatedAt: t0, UpdatedAt: t0}, Count: 2}
	s.Stream(src)
	if err := WriteStateText(&out, s, 0); err != nil {
		t.Fatal(err)
	}
	head := "catalog of /www (state catalog, schema 4)\n  created 2026-06-01T00:00:00Z, updated 2026-06-01T00:00:00Z\n"
	counted := head + "  2 output(s): 2 of p/d, 0 of 0 other owner(s)\n\nPATH      OWNER  KIND    SIZE  UPDATED               URL\n"
	rows := "a.html    p/d    source  3 B   2026-06-01T00:00:00Z  -\nb/c.html  p/d    source  3 B   2026-06-01T00:00:00Z  -\n"
	// Before the second pass, lines after the head may still be buffered;
	// no row may be out.
	if len(src.before) != 2 || src.before[0] != head || !strings.HasPrefix(counted, src.before[1]) {
		t.Errorf("written before each pass: %q, want %q, then a part of %q", src.before, head, counted)
	}
	if out.String() != counted+rows {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), counted+rows)
	}
}
