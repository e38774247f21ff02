package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestScanReadsGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "full.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []Output
	h, n, err := Scan(bytes.NewReader(data), func(o *Output) error { got = append(got, *o); return nil })
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(want.Outputs) || h != want.Header() {
		t.Fatalf("header %+v n %d, want %+v n %d", h, n, want.Header(), len(want.Outputs))
	}
	if diff := cmp.Diff(want.Outputs, got); diff != "" {
		t.Fatalf("records differ (-parse +scan):\n%s", diff)
	}
}

func TestScanRefusesUnsortedButParseAccepts(t *testing.T) {
	c := fullCatalog()
	data, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	// Swap the two records' paths' order by hand: still valid, not sorted.
	doc := strings.Replace(string(data), `"path": "assets/chart.png"`, `"path": "zz/chart.png"`, 1)
	if _, err := Parse([]byte(doc)); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	_, _, err = Scan(strings.NewReader(doc), func(*Output) error { return nil })
	if !errors.Is(err, ErrUnsorted) {
		t.Fatalf("Scan: %v, want ErrUnsorted", err)
	}
}

func TestScanStopsOnCallbackError(t *testing.T) {
	data, _ := Encode(fullCatalog())
	stop := errors.New("enough")
	calls := 0
	_, _, err := Scan(bytes.NewReader(data), func(*Output) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Fatalf("err %v after %d calls, want the callback's error as is after 1", err, calls)
	}
}

func TestEncoderWritesEncodeLayout(t *testing.T) {
	for _, c := range []*Catalog{fullCatalog(), {SchemaVersion: 4, CreatedAt: mustTime("2026-06-04T12:00:00Z"), UpdatedAt: mustTime("2026-06-04T12:00:00Z")}} {
		want, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		sorted, _ := Parse(want)
		var buf bytes.Buffer
		enc, err := NewEncoder(&buf, c.Header())
		if err != nil {
			t.Fatal(err)
		}
		for i := range sorted.Outputs {
			if err := enc.Add(&sorted.Outputs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("encoder differs from Encode:\n%s", cmp.Diff(string(want), buf.String()))
		}
	}
}

func TestEncoderRefusesDisorderAndInvalid(t *testing.T) {
	c, _ := Parse(must(Encode(fullCatalog())))
	enc, _ := NewEncoder(&bytes.Buffer{}, c.Header())
	if err := enc.Add(&c.Outputs[1]); err != nil {
		t.Fatal(err)
	}
	if err := enc.Add(&c.Outputs[0]); err == nil || !strings.Contains(err.Error(), "sorted") {
		t.Fatalf("out of order: %v", err)
	}
	enc, _ = NewEncoder(&bytes.Buffer{}, c.Header())
	bad := c.Outputs[0]
	bad.SHA256 = "md5:x"
	if err := enc.Add(&bad); err == nil || !strings.Contains(err.Error(), "outputs[0].sha256") {
		t.Fatalf("invalid record: %v", err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// randomCatalog builds n records over a small path space so that edits hit
// existing paths, new paths between them, and both ends.
func randomCatalog(r *rand.Rand, n int) *Catalog {
	t0 := mustTime("2026-06-04T12:00:00Z")
	c := &Catalog{SchemaVersion: 4, DistributorVersion: "v1", CreatedAt: t0, UpdatedAt: t0}
	seen := map[string]bool{}
	for len(c.Outputs) < n {
		o := randomOutput(r, t0)
		if !seen[o.Path] {
			seen[o.Path] = true
			c.Outputs = append(c.Outputs, o)
		}
	}
	return c
}

// oddNames are path suffixes that need JSON escapes or multi-byte UTF-8.
var oddNames = []string{"", "", "", `"q`, "\u2028", "é", "<&>", "\u00a0"}

func randomOutput(r *rand.Rand, t0 time.Time) Output {
	p := fmt.Sprintf("d%d/f%03d%s.html", r.IntN(5), r.IntN(200), oddNames[r.IntN(len(oddNames))])
	return Output{Path: p, PipelineID: "p", DestinationID: "d", Source: src, Kind: KindSource,
		SHA256: fmt.Sprintf("sha256:%064x", r.IntN(1000)), Size: int64(r.IntN(1000)), CreatedAt: t0,
		UpdatedAt: t0.Add(time.Duration(r.IntN(100)) * time.Second)}
}

func TestApplyToMatchesInMemoryApply(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		base := randomCatalog(r, r.IntN(40))
		e := &Edit{Fresh: r.IntN(10) == 0, Header: Header{DistributorVersion: "v2", CreatedAt: base.CreatedAt,
			UpdatedAt: base.UpdatedAt.Add(time.Hour)}}
		used := map[string]bool{}
		for range r.IntN(10) {
			o := randomOutput(r, base.CreatedAt)
			if !used[o.Path] {
				used[o.Path] = true
				e.Put = append(e.Put, o)
			}
		}
		for range r.IntN(10) {
			p := fmt.Sprintf("d%d/f%03d.html", r.IntN(5), r.IntN(200))
			if len(base.Outputs) > 0 && r.IntN(2) == 0 {
				p = base.Outputs[r.IntN(len(base.Outputs))].Path
			}
			if !used[p] {
				used[p] = true
				e.Delete = append(e.Delete, p)
			}
		}
		mem, err := base.Apply(e)
		if err != nil {
			t.Fatal(err)
		}
		want := must(Encode(mem))
		var got bytes.Buffer
		var in *bytes.Reader
		if r.IntN(8) != 0 {
			in = bytes.NewReader(must(Encode(base)))
		} else {
			base = nil // no catalog yet
		}
		var n int
		if in != nil {
			n, err = e.ApplyTo(in, &got, false)
		} else {
			n, err = e.ApplyTo(nil, &got, false)
			if mem, _ = (*Catalog)(nil).Apply(e); true {
				want = must(Encode(mem))
			}
		}
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("case %d: streamed edit differs:\n%s", i, cmp.Diff(string(want), got.String()))
		}
		if in != nil {
			// The same edit spliced into the same bytes gives the same
			// document.
			var spliced bytes.Buffer
			ns, err := e.ApplyTo(bytes.NewReader(must(Encode(base))), &spliced, true)
			if err != nil {
				t.Fatalf("case %d: splice: %v", i, err)
			}
			if ns != n || !bytes.Equal(spliced.Bytes(), want) {
				t.Fatalf("case %d: spliced edit (%d records, want %d) differs:\n%s", i, ns, n, cmp.Diff(string(want), spliced.String()))
			}
		}
		if c, _ := Parse(want); n != len(c.Outputs) {
			t.Fatalf("case %d: n %d, want %d", i, n, len(c.Outputs))
		}
	}
}

func TestEditRefusesContradictions(t *testing.T) {
	c := fullCatalog()
	e := &Edit{Header: c.Header(), Put: []Output{c.Outputs[0]}, Delete: []string{c.Outputs[0].Path}}
	if _, err := e.ApplyTo(nil, &bytes.Buffer{}, false); err == nil {
		t.Fatal("put and delete of one path accepted")
	}
	e = &Edit{Header: c.Header(), Put: []Output{c.Outputs[0], c.Outputs[0]}}
	if _, err := c.Apply(e); err == nil {
		t.Fatal("a path put twice accepted")
	}
}
