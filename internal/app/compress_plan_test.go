package app

import (
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/render"
	"github.com/distributor-dev/distributor/internal/txn"
)

// TestCompressPlanAndPhases: compressPlan adds a sidecar per encoding beside
// each matching output at least min_size long (directory stores) or marks the
// output itself gzip (object stores), refuses a sidecar path a bundle file
// takes; webWrites puts every sidecar in the first phase, before any output,
// and sets Content-Encoding only on the objects stored gzip.
func TestCompressPlanAndPhases(t *testing.T) {
	c := &config.Compress{Encodings: []string{"br", "gzip"}, Match: config.DefaultCompressMatch, MinSize: 10}
	outs := []render.Output{{Path: "a.html", Kind: render.KindGenerated, SourcePath: "a.md", Size: 100},
		{Path: "b.png", Size: 100}, {Path: "small.css", Size: 9}}
	got, err := compressPlan(c, false, outs)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, o := range got {
		paths = append(paths, o.Path+":"+o.Encoding)
	}
	if s := strings.Join(paths, " "); s != "a.html: a.html.br:br a.html.gz:gzip b.png: small.css:" {
		t.Errorf("sidecars planned: %s", s)
	}
	objects, err := compressPlan(c, true, outs)
	if err != nil || len(objects) != 3 || objects[0].Encoding != "gzip" || objects[0].Plain.Path != "a.html" || objects[1].Encoding != "" {
		t.Errorf("object store: %+v, %v", objects, err)
	}
	if _, err := compressPlan(c, false, append(outs, render.Output{Path: "a.html.gz", SourcePath: "a.html.gz"})); err == nil ||
		!strings.Contains(err.Error(), `also the output of bundle file "a.html.gz"`) {
		t.Errorf("a bundle file at a sidecar's path: %v", err)
	}

	d := &config.Destination{}
	shape := webWrites(d, "index.html", objects)
	for _, tc := range []struct {
		path, transform string
		phase           int
		encoding        string
	}{
		{"a.html", "", PhaseHTML, "gzip"}, {"b.png", "", PhaseAssets, ""}, {"index.html", "", PhasePrimary, ""},
		{"index.html.br", catalog.TransformBrotli, PhaseSidecars, ""}, {"x.css.gz", catalog.TransformGzip, PhaseSidecars, ""},
		{"c.txt.gz", "", PhaseAssets, ""}, // a bundle file named like a sidecar is none
	} {
		w := txn.Write{Path: tc.path, Record: &catalog.Output{Transform: tc.transform}}
		shape(&w)
		if w.Phase != tc.phase || w.Metadata.ContentEncoding != tc.encoding {
			t.Errorf("%s: phase %d, Content-Encoding %q; want %d, %q", tc.path, w.Phase, w.Metadata.ContentEncoding, tc.phase, tc.encoding)
		}
	}
	if PhaseSidecars >= PhaseAssets {
		t.Errorf("sidecars are not written first")
	}
}
