package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/distributor-dev/distributor/internal/notify"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
)

// putOrder records the paths written, in the order their writes started.
type putOrder struct {
	storage.Store
	mu    *sync.Mutex
	paths *[]string
}

func (o *putOrder) add(p string) { o.mu.Lock(); *o.paths = append(*o.paths, p); o.mu.Unlock() }

// Put implements storage.Store: it records the path ("putif path" for a
// conditional write).
func (o *putOrder) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion {
		o.add("putif " + p)
	} else {
		o.add(p)
	}
	return o.Store.Put(ctx, p, r, size, opts)
}

// Stage implements storage.Store: a staged write is recorded when it is
// committed (made visible).
func (o *putOrder) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	sg, err := o.Store.Stage(ctx, p, r, size, opts)
	if err != nil {
		return nil, err
	}
	return stagedHook{sg, func() { o.add(p) }}, nil
}

// RewriteIf is the catalog's conditional write on local disk.
func (o *putOrder) RewriteIf(ctx context.Context, p string, v storage.Version, fn func(io.Reader, io.Writer) error) error {
	o.add("putif " + p)
	return o.Store.RewriteIf(ctx, p, v, fn)
}

func (o *putOrder) Delete(ctx context.Context, p string) error {
	o.add("delete " + p)
	return o.Store.Delete(ctx, p)
}

// TestRunWriteOrder: a run writes the report's assets first, then its
// other HTML pages, then its primary page; deletes follow every write and
// the catalog comes last.
func TestRunWriteOrder(t *testing.T) {
	f := yamlFixture(t, `pipelines:
  - {id: mine, source: mine, destinations: [site]}
destinations:
  - id: site
    backend: local
    path: www
    workflow: replacement
    paths: {rename: {report.md: index.md}}
`)
	f.bundle("mine", "mine.one", map[string]string{"report.md": "# R\n", "old.txt": "x"})
	if d := f.run(f.app(nil), "mine"); d.Status != report.StatusOK {
		t.Fatalf("first run: %s %v", d.Status, d.Error)
	}
	f.bundle("mine", "mine.two", map[string]string{
		"report.md": "# R2\n[a](a.md)\n", "a.md": "# A\n", "z.md": "# Z\n",
		"img/a.png": "png", "style.css": "css", "zz.csv": "1,2",
	})
	var (
		mu    sync.Mutex
		order []string
	)
	a := f.app(func(s storage.Store) storage.Store { return &putOrder{Store: s, mu: &mu, paths: &order} })
	if d := f.run(a, "mine"); d.Status != report.StatusOK {
		t.Fatalf("second run: %s %v", d.Status, d.Error)
	}
	// Keep the outputs and the catalog (not the probe, lock and journal).
	var got []string
	for _, e := range order {
		if !strings.Contains(e, ".distributor") || e == "putif .distributor.json" {
			got = append(got, e)
		}
	}
	pos := map[string]int{}
	for k, p := range got {
		pos[p] = k
	}
	for _, asset := range []string{"img/a.png", "style.css", "zz.csv"} {
		for _, page := range []string{"a.html", "z.html", "index.html"} {
			if pos[asset] > pos[page] {
				t.Errorf("%s written after %s: %v", asset, page, got)
			}
		}
	}
	for _, page := range []string{"a.html", "z.html"} {
		if pos[page] > pos["index.html"] {
			t.Errorf("%s written after the primary page: %v", page, got)
		}
	}
	if pos["delete old.txt"] < pos["index.html"] {
		t.Errorf("delete before the last write: %v", got)
	}
	if got[len(got)-1] != "putif .distributor.json" {
		t.Errorf("catalog is not the last write: %v", got)
	}
}

// TestChangedURLs: the published event carries the URLs a run wrote
// (created and overwritten, not unchanged) and deleted, for CDN purges.
func TestChangedURLs(t *testing.T) {
	f := yamlFixture(t, `pipelines:
  - {id: mine, source: mine, destinations: [site]}
destinations:
  - id: site
    backend: local
    path: www
    workflow: replacement
    links: {base_url: "https://r.example.com/", pretty: true}
    paths: {rename: {report.md: index.md}}
    index: {path: archive.html}
`)
	f.bundle("mine", "mine.one", map[string]string{"report.md": "# R\n", "old.csv": "x", "same.css": "c"})
	a := f.app(nil)
	f.run(a, "mine")
	f.bundle("mine", "mine.two", map[string]string{"report.md": "# R2\n", "new.csv": "y", "same.css": "c"})
	o, err := a.Run(t.Context(), f.cfg, RunOptions{Pipelines: []string{"mine"}})
	if err != nil {
		t.Fatal(err)
	}
	p := &o.Pipelines[0]
	ev, ok := notify.EventOf(p, &p.Destinations[0])
	if !ok || ev.Event != "published" {
		t.Fatalf("event %+v %v", ev, ok)
	}
	// same.css is unchanged (its record only moves to the new source).
	wantW := []string{"https://r.example.com/", "https://r.example.com/archive.html", "https://r.example.com/new.csv"}
	wantD := []string{"https://r.example.com/old.csv"}
	if fmt.Sprint(ev.URLs.Written) != fmt.Sprint(wantW) || fmt.Sprint(ev.URLs.Deleted) != fmt.Sprint(wantD) || ev.URLs.WrittenTotal != 3 || ev.URLs.DeletedTotal != 1 {
		t.Errorf("written %v (%d), deleted %v (%d); want %v, %v", ev.URLs.Written, ev.URLs.WrittenTotal, ev.URLs.Deleted, ev.URLs.DeletedTotal, wantW, wantD)
	}
	// A skip_same rerun changes nothing and lists nothing.
	o, _ = a.Run(t.Context(), f.cfg, RunOptions{Pipelines: []string{"mine"}})
	p = &o.Pipelines[0]
	if ev, _ := notify.EventOf(p, &p.Destinations[0]); ev.Event != "skipped" || ev.URLs.WrittenTotal != 0 || len(ev.URLs.Written) != 0 {
		t.Errorf("rerun: %+v", ev)
	}
}
