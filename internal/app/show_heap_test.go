package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/report"
)

// lineCounter counts the bytes and lines written to it, keeping neither.
type lineCounter struct{ bytes, lines int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.bytes += len(p)
	c.lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// TestShowStateHeapDoesNotGrowWithTheCatalog shows the state of roots whose
// catalogs hold 5,000 and 100,000 records (about 3 and 60 MB of JSON) as
// the text table (a line per record) and as the stored document: the heap
// each uses stays under the bound of the other maintenance commands for
// both roots, because the records stream from the copy of the bytes read,
// once to measure the table and once to write it, and the document is
// copied from it. Holding the catalog would need about 100 MB for the
// larger root, and 434 MB did with the table.
func TestShowStateHeapDoesNotGrowWithTheCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 45 MB catalog")
	}
	const bound = 16 << 20
	ctx := context.Background()
	for _, n := range []int{5000, 100000} {
		f := yamlFixture(t, maintYAML)
		size := writeLargeCatalog(t, f.root, n)
		a := f.app(nil)
		for _, json := range []bool{false, true} {
			var out lineCounter
			var err error
			peak := peakHeap(func() {
				var rep *report.StateShow
				rep, err = a.ShowState(ctx, f.cfg, ShowOptions{Root: Root{Pipeline: "mine", Destination: "site"}})
				if err != nil {
					return
				}
				defer rep.Close()
				if json {
					err = rep.WriteRaw(&out)
				} else {
					err = report.WriteStateText(&out, rep, 0)
				}
			})
			t.Logf("state show (json %v), %d records (%d MB catalog): peak heap %.1f MB", json, n, size>>20, float64(peak)/(1<<20))
			switch {
			case err != nil:
				t.Fatalf("json %v, %d records: %v", json, n, err)
			case json && int64(out.bytes) != size:
				t.Errorf("json, %d records: wrote %d bytes, the catalog has %d", n, out.bytes, size)
			case !json && out.lines != n+5: // 3 lines, a blank one, the table's head
				t.Errorf("text, %d records: wrote %d lines, want %d", n, out.lines, n+5)
			}
			if peak > bound {
				t.Errorf("json %v, %d records: peak heap %.1f MB, more than the %d MB bound", json, n, float64(peak)/(1<<20), bound>>20)
			}
		}
	}
}

// TestShowStateUnsortedCatalog: a valid catalog whose records are not sorted
// by path (written by hand) shows its records sorted, and its stored bytes
// as they are.
func TestShowStateUnsortedCatalog(t *testing.T) {
	f := yamlFixture(t, maintYAML)
	var b bytes.Buffer
	encodeArchive(t, &b, 3)
	a, z := "archive/00000/report-0000000.html", "archive/00000/report-0000002.html"
	doc := strings.Replace(b.String(), a, "TMP", 1)
	doc = strings.Replace(doc, z, a, 1)
	doc = strings.Replace(doc, "TMP", z, 1)
	if _, _, err := catalog.Scan(strings.NewReader(doc), func(*catalog.Output) error { return nil }); !errors.Is(err, catalog.ErrUnsorted) {
		t.Fatalf("test bug: the document streams: %v", err)
	}
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.root, catalog.FileName), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := f.app(nil).ShowState(context.Background(), f.cfg, ShowOptions{Root: Root{Pipeline: "mine", Destination: "site"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	var paths []string
	if err := rep.Outputs(func(o *catalog.Output) error { paths = append(paths, o.Path); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := "archive/00000/report-0000000.html archive/00000/report-0000001.html archive/00000/report-0000002.html"; strings.Join(paths, " ") != want || rep.Count != 3 {
		t.Errorf("outputs %q (count %d), want %s", paths, rep.Count, want)
	}
	var raw strings.Builder
	if err := rep.WriteRaw(&raw); err != nil || raw.String() != doc {
		t.Errorf("WriteRaw: %v; the stored document: %v", err, raw.String() == doc)
	}
}
