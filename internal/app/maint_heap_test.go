package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
)

// maintYAML configures the owner of archiveCatalog's records (theirs ->
// site-theirs) with a retention policy that keeps their one publication,
// and another owner (mine -> site) at the same root.
const maintYAML = `pipelines:
  - {id: mine, source: mine, destinations: [site]}
  - {id: theirs, source: theirs, destinations: [site-theirs]}
destinations:
  - {id: site, backend: local, path: www}
  - {id: site-theirs, backend: local, path: www, retention: {prune: {older_than: 1d, keep_min: 1}}}
`

// TestMaintenanceHeapDoesNotGrowWithTheCatalog runs prune --dry-run,
// verify --quick and reconcile-state --dry-run over roots whose catalogs
// hold 5,000 and 100,000 records (about 2 and 45 MB of JSON) of one
// publication that the policy keeps, and verify and reconcile-state scoped
// to an owner with no records: each report is small, and the heap each
// command uses stays under one bound for both roots, because the catalog
// streams through it (and the listing alongside it) instead of being held.
// Reading the catalog whole would need about 100 MB for the larger root.
func TestMaintenanceHeapDoesNotGrowWithTheCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 45 MB catalog")
	}
	const bound = 16 << 20
	ctx := context.Background()
	for _, n := range []int{5000, 100000} {
		f := yamlFixture(t, maintYAML)
		size := writeLargeCatalog(t, f.root, n)
		a := f.app(nil)
		theirs := Root{Pipeline: "theirs", Destination: "site-theirs"}
		mine := Root{Pipeline: "mine", Destination: "site"}
		commands := []struct {
			name string
			run  func() error
		}{
			{"prune --dry-run", func() error {
				rep, err := a.Prune(ctx, f.cfg, PruneOptions{Root: theirs})
				if err == nil && (rep.Error != nil || rep.Owned != n || len(rep.Selected) != 0 || len(rep.Publications) != 0) {
					err = errors.New(report.Brief(rep.Cause) + ": " + strings.Join(mtPaths(rep.Selected), " "))
				}
				return err
			}},
			{"verify --quick", func() error {
				rep, err := a.Verify(ctx, f.cfg, VerifyOptions{Root: mine, Quick: true})
				if err == nil && (rep.Error != nil || rep.OK != 0 || rep.Failed()) {
					err = errors.New("unexpected report")
				}
				return err
			}},
			{"verify", func() error {
				rep, err := a.Verify(ctx, f.cfg, VerifyOptions{Root: mine})
				if err == nil && (rep.Error != nil || rep.Failed()) {
					err = errors.New("unexpected report")
				}
				return err
			}},
			{"reconcile-state --dry-run", func() error {
				rep, err := a.ReconcileState(ctx, f.cfg, ReconcileOptions{Root: mine, DryRun: true})
				if err == nil && (rep.Error != nil || rep.Checked != 0 || len(rep.Unmanaged) != 0) {
					err = errors.New("unexpected report")
				}
				return err
			}},
		}
		for _, c := range commands {
			var err error
			peak := peakHeap(func() { err = c.run() })
			t.Logf("%s, %d records (%d MB catalog): peak heap %.1f MB", c.name, n, size>>20, float64(peak)/(1<<20))
			if err != nil {
				t.Fatalf("%s, %d records: %v", c.name, n, err)
			}
			if peak > bound {
				t.Errorf("%s, %d records: peak heap %.1f MB, more than the %d MB bound", c.name, n, float64(peak)/(1<<20), bound>>20)
			}
		}
	}
}

// mtPaths lists the paths of prune entries.
func mtPaths(es []report.PruneEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

// TestReconcileMergesListingWithCatalogInPathOrder: reconcile-state finds
// missing and unmanaged paths by one merge of the listing with the catalog,
// both in byte-wise path order, where a path's directory sorts after names
// that extend it with a smaller byte ("a-b", "a.b" before "a/..."), and over
// a valid catalog whose records are not sorted (written by hand), which it
// reads whole once and leaves sorted.
func TestReconcileMergesListingWithCatalogInPathOrder(t *testing.T) {
	for _, unsorted := range []bool{false, true} {
		f := yamlFixture(t, maintYAML)
		writeLargeCatalog(t, f.root, 0)
		recorded := []string{"a-b.txt", "a.b", "a/b.txt", "a/c.txt", "a/d/e.txt", "b"}
		for _, p := range []string{"a-b.txt", "a.b", "a/b.txt", "a/d/e.txt", "a0", "a/a.txt", "a/d.txt", "c"} {
			full := filepath.Join(f.root, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Every recorded path is the other owner's (mine -> site); "a/c.txt"
		// and "b" are missing from storage.
		c := &catalog.Catalog{CreatedAt: f.app(nil).Now(), UpdatedAt: f.app(nil).Now()}
		for _, p := range recorded {
			c.Outputs = append(c.Outputs, catalog.Output{Path: p, PipelineID: "mine", DestinationID: "site",
				Source: catalog.Source{ID: "s", Digest: "sha256:" + strings.Repeat("0", 64), Created: c.CreatedAt},
				Kind:   catalog.KindSource, SHA256: "sha256:" + strings.Repeat("1", 64), Size: 1, CreatedAt: c.CreatedAt, UpdatedAt: c.CreatedAt})
		}
		doc, err := catalog.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if unsorted {
			// Swap the first and the last record's paths: still valid, no
			// longer sorted.
			s := strings.Replace(string(doc), `"path": "a-b.txt"`, `"path": "TMP"`, 1)
			s = strings.Replace(s, `"path": "b"`, `"path": "a-b.txt"`, 1)
			doc = []byte(strings.Replace(s, `"path": "TMP"`, `"path": "b"`, 1))
			if _, _, err := catalog.Scan(bytes.NewReader(doc), func(*catalog.Output) error { return nil }); !errors.Is(err, catalog.ErrUnsorted) {
				t.Fatalf("test bug: the document streams: %v", err)
			}
		}
		path := filepath.Join(f.root, catalog.FileName)
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := f.app(nil).ReconcileState(context.Background(), f.cfg, ReconcileOptions{Root: Root{Pipeline: "mine", Destination: "site"}})
		if err != nil || rep.Error != nil {
			t.Fatalf("unsorted %v: %v %v", unsorted, err, rep.Error)
		}
		var missing []string
		for _, m := range rep.Missing {
			missing = append(missing, m.Path)
		}
		if want := []string{"a/c.txt", "b"}; !slices.Equal(missing, want) || rep.Checked != len(recorded) {
			t.Errorf("unsorted %v: missing %q of %d checked, want %q of %d", unsorted, missing, rep.Checked, want, len(recorded))
		}
		if want := []string{"a/a.txt", "a/d.txt", "a0", "c"}; !slices.Equal(rep.Unmanaged, want) {
			t.Errorf("unsorted %v: unmanaged %q, want %q", unsorted, rep.Unmanaged, want)
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		if _, _, err := catalog.Scan(bytes.NewReader(after), func(o *catalog.Output) error { left = append(left, o.Path); return nil }); err != nil {
			t.Fatalf("unsorted %v: catalog after reconcile-state: %v", unsorted, err)
		}
		if want := []string{"a-b.txt", "a.b", "a/b.txt", "a/d/e.txt"}; !slices.Equal(left, want) {
			t.Errorf("unsorted %v: records left %q, want %q", unsorted, left, want)
		}
	}
}

// commitAfterCatalogRead is a store whose catalog a concurrent writer
// replaces right after a reader first reads it (once).
type commitAfterCatalogRead struct {
	storage.Store
	once    *sync.Once
	replace func()
}

func (s commitAfterCatalogRead) ReadVersioned(ctx context.Context, path string, fn func(io.Reader) error) (storage.Version, error) {
	v, err := s.Store.ReadVersioned(ctx, path, fn)
	if path == catalog.FileName {
		s.once.Do(s.replace)
	}
	return v, err
}

// TestVerifyPassesReadTheVersionClassified: verify without the lock reads
// the catalog in more than one pass (with a progress display, a count
// first); a run that commits a new catalog between them changes neither
// what it checks nor its success, because the passes read the copy kept of
// the version it classified (on local disk too).
func TestVerifyPassesReadTheVersionClassified(t *testing.T) {
	f := yamlFixture(t, verifyYAML)
	files := map[string]string{"a.txt": "aaa", "b/c.txt": "ccccc"}
	f.bundle("mine", "mine.one", files)
	if d := f.run(f.app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("run: %s %v", d.Status, str(d.Error))
	}
	path := filepath.Join(f.root, catalog.FileName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The new catalog records a third output, whose file is missing: a
	// verify that read it would fail.
	c, err := catalog.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	extra := c.Outputs[0]
	extra.Path = "new.txt"
	c.Outputs = append(c.Outputs, extra)
	next, err := catalog.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	a := f.app(func(st storage.Store) storage.Store {
		return commitAfterCatalogRead{Store: st, once: new(sync.Once), replace: func() {
			if err := os.WriteFile(path, next, 0o644); err != nil {
				t.Error(err)
			}
		}}
	})
	p := &progressRecorder{started: map[string][2]int64{}, done: map[string]int64{}}
	a.OnEvent = p.event
	rep, err := a.Verify(context.Background(), f.cfg, VerifyOptions{Root: Root{Pipeline: "mine", Destination: "site"}})
	if err != nil || rep.Error != nil || rep.Failed() || rep.OK != 2 {
		t.Fatalf("verify: %+v %v %v", rep, err, str(rep.Error))
	}
	if got := p.started["verify mine -> site"]; got != [2]int64{2, 8} {
		t.Errorf("started %v, want 2 files, 8 bytes", p.started)
	}
}
