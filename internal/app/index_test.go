package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/testutil/faultstore"
)

const indexYAML = `pipelines:
  - {id: air, source: air, destinations: [archive]}
  - {id: air.extra, source: extra, destinations: [archive]}
  - {id: traffic, source: traffic, destinations: [traffic-site]}
destinations:
  - id: archive
    backend: local
    path: %s
    paths: {prefix: "{source_id}/"}
    links: {base_url: "https://r.example.com/", pretty: true}
    index: {path: index.html, title: Air quality, feed: feed.xml}
  - id: traffic-site
    backend: local
    path: %s
    paths: {prefix: "traffic/"}
`

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestArchiveIndex: every publishing run rebuilds the index and feed from
// the catalog (reports of every pipeline publishing to the destination id,
// newest first, not other destinations' outputs at the same root); a rerun
// is skip_same; the same runs on two roots give byte-identical index and
// feed; the catalog records them with their transforms.
func TestArchiveIndex(t *testing.T) {
	f := yamlFixture(t, strings.ReplaceAll(indexYAML, "%s", "www"))
	seq := func(f *fixture) {
		t.Helper()
		a := f.app(nil)
		f.bundle("air", "air.daily", map[string]string{"report.md": "# Day 1\n", "data.csv": "1"})
		if d := f.run(a, "air"); d.Status != report.StatusOK || d.Action != "publish_new" {
			t.Fatalf("run 1: %s %s %v", d.Action, d.Status, d.Error)
		}
		f.bundle("traffic", "traffic.daily", map[string]string{"index.md": "# Traffic\n"})
		f.run(a, "traffic")
		f.bundle("extra", "air.extra", map[string]string{"special.md": "# Special\n"})
		if d := f.run(a, "air.extra"); d.Status != report.StatusOK {
			t.Fatalf("extra: %s %s", d.Status, *d.Error)
		}
		if d := f.run(a, "air.extra"); d.Action != "skip_same" {
			t.Errorf("rerun: %s, want skip_same", d.Action)
		}
	}
	seq(f)
	page := string(readFile(t, filepath.Join(f.root, "index.html")))
	// Relative links, also with links.base_url (the feed's are absolute).
	if !strings.Contains(page, `<a href="air.daily/report.html">air.daily</a>`) ||
		!strings.Contains(page, `<a href="air.extra/special.html">air.extra</a>`) || strings.Contains(page, "traffic") {
		t.Errorf("index page:\n%s", page)
	}
	feed := readFile(t, filepath.Join(f.root, "feed.xml"))
	if !bytes.Contains(feed, []byte("<title>air.extra</title>")) || !bytes.Contains(feed, []byte("<title>air.daily</title>")) ||
		!bytes.Contains(feed, []byte(`href="https://r.example.com/air.daily/report.html"`)) {
		t.Errorf("feed:\n%s", feed)
	}
	st := catalog.Read(readFile(t, filepath.Join(f.root, catalog.FileName)))
	if st.Status != catalog.StatusCatalog {
		t.Fatalf("catalog: %v %v", st.Status, st.Problem)
	}
	idx := st.Catalog.Index()
	if r := idx["index.html"]; r == nil || r.Kind != catalog.KindGenerated || r.Transform != catalog.TransformIndex || r.SourcePath != "" || r.PipelineID != "air.extra" {
		t.Errorf("index record %+v", r)
	}
	if r := idx["feed.xml"]; r == nil || r.Transform != catalog.TransformFeed {
		t.Errorf("feed record %+v", r)
	}

	// Determinism: the same runs on another root give the same bytes.
	g := yamlFixture(t, strings.ReplaceAll(indexYAML, "%s", "www"))
	seq(g)
	for _, p := range []string{"index.html", "feed.xml"} {
		if !bytes.Equal(readFile(t, filepath.Join(f.root, p)), readFile(t, filepath.Join(g.root, p))) {
			t.Errorf("%s differs between two identical sequences of runs", p)
		}
	}
}

// TestArchiveIndexConflicts: a bundle output at the index path is refused
// before anything is written; an index path that the catalog records as
// another destination's index (a shared root the configuration cannot
// see) is fail_conflict.
func TestArchiveIndexConflicts(t *testing.T) {
	f := yamlFixture(t, strings.ReplaceAll(indexYAML, "%s", "www"))
	f.bundle("air", "air.daily", map[string]string{"report.md": "# Day\n"})
	f.run(f.app(nil), "air")

	// Another configuration: destination other, same root, same index path.
	other := &fixture{t: t, dir: f.dir, root: f.root, cfg: writeConfig(t, f.dir, "other.yaml", `pipelines:
  - {id: air, source: air, destinations: [other]}
destinations:
  - id: other
    backend: local
    path: www
    paths: {prefix: "other/"}
    index: {path: index.html}
`)}
	before := readFile(t, filepath.Join(f.root, "index.html"))
	d := other.run(other.app(nil), "air")
	if d.Action != "fail_conflict" || d.Status != report.StatusFailed || d.Error == nil || !strings.Contains(*d.Error, `destination "archive"'s archive index`) {
		t.Errorf("foreign index: %s %s %v", d.Action, d.Status, d.Error)
	}
	if !bytes.Equal(before, readFile(t, filepath.Join(f.root, "index.html"))) {
		t.Error("the other destination's index was changed")
	}

	// A bundle file published at the index path.
	f.bundle("air", "air.daily", map[string]string{"report.md": "# Day\n"})
	h := yamlFixture(t, `pipelines:
  - {id: air, source: air, destinations: [site]}
destinations:
  - id: site
    backend: local
    path: www2
    paths: {rename: {report.md: index.md}}
    index: {path: index.html}
`)
	h.bundle("air", "air.daily", map[string]string{"report.md": "# Day\n"})
	d = h.run(h.app(nil), "air")
	if d.Status != report.StatusFailed || d.Error == nil || !strings.Contains(*d.Error, `index.path "index.html" is also the output of bundle file "report.md"`) {
		t.Errorf("collision: %s %v", d.Status, d.Error)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "www2")); err == nil {
		t.Error("a refused run wrote to the root")
	}
}

// TestPruneKeepsArchiveIndex: prune never selects a destination's archive
// index or feed (they are rebuilt by every run, not reports), however old,
// and they do not count towards keep_min.
func TestPruneKeepsArchiveIndex(t *testing.T) {
	me := catalog.Owner{PipelineID: "p", DestinationID: "d"}
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(p, transform string, created time.Time) catalog.Output {
		o := catalog.Output{Path: p, PipelineID: "p", DestinationID: "d", Kind: catalog.KindSource, UpdatedAt: old,
			Source: catalog.Source{ID: "r", Digest: "sha256:r", Created: created}}
		if transform != "" {
			o.Kind, o.Transform = catalog.KindGenerated, transform
		}
		return o
	}
	// The index and feed carry the newest source (the last run's): were
	// they a publication, keep_min 1 would keep them and select both reports.
	outs := []catalog.Output{rec("a/index.html", catalog.TransformMarkdown, old), rec("b.csv", "", old.Add(-time.Hour)),
		rec("index.html", catalog.TransformIndex, old.Add(time.Hour)), rec("feed.xml", catalog.TransformFeed, old.Add(time.Hour))}
	got := SelectPrune(outs, me, old.AddDate(1, 0, 0), 24*time.Hour, 1)
	if len(got) != 1 || len(got[0].Outputs) != 1 || got[0].Outputs[0].Path != "b.csv" {
		t.Errorf("selected %v, want the publication [b.csv] (a/index.html's kept by keep_min 1, the index and feed never)", got)
	}
}

// TestPruneRebuildsIndexBeforeAFailedDelete: prune --apply rewrites the
// archive index and feed before it deletes; when a delete then fails, the
// catalog records the rebuilt pages (their new bytes) and exactly the
// deletes that happened, and the index links no pruned report either way.
func TestPruneRebuildsIndexBeforeAFailedDelete(t *testing.T) {
	f := yamlFixture(t, `pipelines:
  - {id: air, source: air, destinations: [archive]}
destinations:
  - id: archive
    backend: local
    path: www
    paths: {prefix: "{source_id}/"}
    links: {base_url: "https://r.example.com/"}
    index: {path: index.html, title: Air, feed: feed.xml}
    retention: {prune: {older_than: 1d, keep_min: 1}}
`)
	a := f.app(nil)
	for _, id := range []string{"air.one", "air.two"} {
		f.bundle("air", id, map[string]string{"report.md": "# " + id + "\n", "data.csv": id})
		if d := f.run(a, "air"); d.Status != report.StatusOK {
			t.Fatalf("publish %s: %s %v", id, d.Status, d.Error)
		}
	}
	var fs *faultstore.Store
	p := f.app(func(st storage.Store) storage.Store {
		// Lock traffic aside: 1 the journal, 2 and 3 the index and feed,
		// 4 and 5 the deletes of the pruned report's two files. The
		// second delete fails.
		fs = faultstore.New(st, 5, false)
		fs.Ignore = faultstore.IgnoreLock
		return fs
	})
	p.Now = func() time.Time { return time.Date(2026, 7, 20, 8, 0, 0, 0, time.UTC) }
	rep, err := p.Prune(context.Background(), f.cfg, PruneOptions{Root: Root{Pipeline: "air", Destination: "archive"}, Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	// Both bundles were sealed with one created time: the smaller id
	// counts as newer, so keep_min 1 keeps air.one and air.two goes.
	if !rep.Failed() || len(rep.Deleted) != 1 || len(rep.Publications) != 1 || rep.Publications[0].Source.ID != "air.two" {
		t.Fatalf("prune: %+v, want one of air.two's two deletes done and a failure", rep)
	}
	if strings.Join(rep.Rebuilt, " ") != "feed.xml index.html" {
		t.Errorf("rebuilt %q, want feed.xml and index.html", rep.Rebuilt)
	}
	for _, page := range []string{"index.html", "feed.xml"} {
		if b := string(readFile(t, filepath.Join(f.root, page))); strings.Contains(b, "air.two") || !strings.Contains(b, "air.one") {
			t.Errorf("%s after the prune links air.two or lost air.one:\n%s", page, b)
		}
	}
	st := catalog.Read(readFile(t, filepath.Join(f.root, catalog.FileName)))
	if st.Status != catalog.StatusCatalog {
		t.Fatalf("catalog: %v %v", st.Status, st.Problem)
	}
	kept := 0
	for _, o := range st.Catalog.Outputs {
		b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(o.Path)))
		if err != nil {
			t.Errorf("record %s: %v", o.Path, err)
			continue
		}
		if sum := sha256.Sum256(b); o.SHA256 != "sha256:"+hex.EncodeToString(sum[:]) || o.Size != int64(len(b)) {
			t.Errorf("record %s does not match its file (%s, %d bytes)", o.Path, o.SHA256, o.Size)
		}
		if o.Source.ID == "air.two" && o.Transform != catalog.TransformIndex && o.Transform != catalog.TransformFeed {
			kept++
		}
	}
	if kept != 1 {
		t.Errorf("%d records of air.two left, want the one whose delete failed", kept)
	}
}
