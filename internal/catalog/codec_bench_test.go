package catalog_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// benchCatalog returns a valid catalog of n source outputs with URLs, the
// shape of a large archive root.
func benchCatalog(n int) *catalog.Catalog {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	src := catalog.Source{ID: "bench.2026-06-01", Digest: fmt.Sprintf("sha256:%064x", 1), Created: t0}
	c := &catalog.Catalog{SchemaVersion: catalog.SchemaVersion, DistributorVersion: "v0.1.0", CreatedAt: t0, UpdatedAt: t0,
		Outputs: make([]catalog.Output, n)}
	for i := range n {
		p := fmt.Sprintf("%04d/report-%07d.html", i/100, i)
		c.Outputs[i] = catalog.Output{Path: p, PipelineID: "bench", DestinationID: "archive", Source: src,
			Kind: catalog.KindSource, URL: "https://reports.example.com/archive/" + p,
			SHA256: fmt.Sprintf("sha256:%064x", i), Size: int64(1000 + i), CreatedAt: t0, UpdatedAt: t0}
	}
	return c
}

var sizes = []int{1000, 10000, 100000}

// BenchmarkEncode measures catalog.Encode (clone, sort, validate, JSON with
// indentation) of catalogs of 1k, 10k and 100k outputs. MB/s is of the
// encoded document.
func BenchmarkEncode(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("outputs=%d", n), func(b *testing.B) {
			c := benchCatalog(n)
			data, err := catalog.Encode(c)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := catalog.Encode(c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/output")
		})
	}
}

// BenchmarkRead measures catalog.Read (probe the schema version, strict
// decode, validate) of the documents BenchmarkEncode writes.
func BenchmarkRead(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("outputs=%d", n), func(b *testing.B) {
			data, err := catalog.Encode(benchCatalog(n))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				st := catalog.Read(data)
				if st.Status != catalog.StatusCatalog {
					b.Fatalf("status %s: %v", st.Status, st.Problem)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/output")
		})
	}
}

// BenchmarkScan measures the streaming reader (strict decode and validate,
// record by record), a fresh record each.
func BenchmarkScan(b *testing.B) {
	benchScan(b, func(r io.Reader) error {
		_, _, err := catalog.Scan(r, func(*catalog.Output) error { return nil })
		return err
	})
}

// BenchmarkScanCanonical measures the reader a run plans from: Scan's
// checks, one reused record for all.
func BenchmarkScanCanonical(b *testing.B) {
	benchScan(b, func(r io.Reader) error {
		_, _, _, err := catalog.ScanCanonical(r, func(*catalog.Output) error { return nil })
		return err
	})
}

func benchScan(b *testing.B, scan func(io.Reader) error) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("outputs=%d", n), func(b *testing.B) {
			data, err := catalog.Encode(benchCatalog(n))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := scan(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/output")
		})
	}
}

// BenchmarkApplyEdit measures writing the next catalog of an additive run
// that adds one record: the base streamed through the edit into a writer.
func BenchmarkApplyEdit(b *testing.B) { benchEdit(b, false) }

// BenchmarkSpliceEdit is BenchmarkApplyEdit the way a run's write pass
// applies it to a catalog in Encode's layout: untouched records copied by
// their lines.
func BenchmarkSpliceEdit(b *testing.B) { benchEdit(b, true) }

func benchEdit(b *testing.B, splice bool) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("outputs=%d", n), func(b *testing.B) {
			c := benchCatalog(n)
			data, err := catalog.Encode(c)
			if err != nil {
				b.Fatal(err)
			}
			add := c.Outputs[n/2]
			add.Path += ".new"
			e := &catalog.Edit{Header: c.Header(), Put: []catalog.Output{add}}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.ApplyTo(bytes.NewReader(data), io.Discard, splice); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/output")
		})
	}
}
