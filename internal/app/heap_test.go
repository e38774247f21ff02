package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
)

// writeLargeCatalog writes archiveCatalog's n records as the catalog at
// root, streaming, and returns its size. The recorded files need not
// exist: a run trusts the catalog.
func writeLargeCatalog(t testing.TB, root string, n int) int64 {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(root, catalog.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	encodeArchive(t, f, n)
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// peakHeap runs fn while sampling the live heap (with the collector made
// eager, so that the heap in use stays close to what is live) and returns
// the highest sample above the heap in use before fn.
func peakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// TestRunHeapDoesNotGrowWithTheCatalog publishes one new file into roots
// whose catalogs hold 5,000 and 100,000 records (about 2 and 45 MB of
// JSON): the heap a run uses stays under one bound for both, because the
// catalog streams through it (read once, keeping only the records the plan
// needs; written by streaming the old one through the edit) and storage is
// asked only about the new path. Reading the catalog whole would need
// about 100 MB for the larger root.
func TestRunHeapDoesNotGrowWithTheCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 45 MB catalog")
	}
	const bound = 16 << 20
	for _, n := range []int{5000, 100000} {
		f := newFixture(t, config.WorkflowAdditive)
		size := writeLargeCatalog(t, f.root, n)
		f.bundle("mine", "mine.one", map[string]string{"daily/new.html": "<p>new</p>\n"})
		a := f.app(nil)
		var d *report.Destination
		peak := peakHeap(func() { d = f.run(a, "mine") })
		t.Logf("%d records (%d MB catalog): action %s, peak heap %.1f MB", n, size>>20, d.Action, float64(peak)/(1<<20))
		if d.Action != "upsert_additive" || d.Counts.Created != 1 || d.Counts.Retained != n {
			t.Fatalf("%d records: %+v", n, d)
		}
		c, err := os.ReadFile(filepath.Join(f.root, catalog.FileName))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(c)) <= size {
			t.Fatalf("%d records: catalog did not grow by the new record", n)
		}
		if peak > bound {
			t.Errorf("%d records: peak heap %.1f MB, more than the %d MB bound", n, float64(peak)/(1<<20), bound>>20)
		}
	}
}

// TestRunOverUnsortedCatalog: a valid catalog whose records are not sorted
// by path (hand-edited; distributor never writes one) cannot stream
// through the merge; the run reads it whole instead, publishes, and leaves
// a sorted catalog holding every record.
func TestRunOverUnsortedCatalog(t *testing.T) {
	f := newFixture(t, config.WorkflowAdditive)
	writeLargeCatalog(t, f.root, 3)
	path := filepath.Join(f.root, catalog.FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Swap the first and last record's paths: still valid, no longer sorted.
	first, last := "archive/00000/report-0000000.html", "archive/00000/report-0000002.html"
	doc := strings.Replace(string(data), `"path": "`+first+`"`, `"path": "TMP"`, 1)
	doc = strings.Replace(doc, `"path": "`+last+`"`, `"path": "`+first+`"`, 1)
	doc = strings.Replace(doc, `"path": "TMP"`, `"path": "`+last+`"`, 1)
	if _, err := catalog.Parse([]byte(doc)); err != nil {
		t.Fatalf("test bug: %v", err)
	}
	if _, _, err := catalog.Scan(strings.NewReader(doc), func(*catalog.Output) error { return nil }); !errors.Is(err, catalog.ErrUnsorted) {
		t.Fatalf("test bug: the document streams: %v", err)
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	f.bundle("mine", "mine.one", map[string]string{"daily/new.html": "<p>new</p>\n"})
	d := f.run(f.app(nil), "mine")
	if d.Action != "upsert_additive" || d.Counts.Created != 1 || d.Counts.Retained != 3 {
		t.Fatalf("run: %+v", d)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, _, err := catalog.Scan(bytes.NewReader(after), func(*catalog.Output) error { n++; return nil }); err != nil || n != 4 {
		t.Fatalf("catalog after the run: %v, %d records (want 4, sorted)", err, n)
	}
}
