package app

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/render"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/testutil/nginxtest"
)

const compressYAML = `pipelines:
  - {id: p, source: b, destinations: [site, copy]}
destinations:
  - id: site
    backend: local
    path: www
    workflow: WORKFLOW
    publish: {source: all}
    index: {path: index.html, title: Weather}
    compress: {encodings: [br, gzip, zstd]}
  - id: copy
    backend: local
    path: www2
    publish: {source: all}
    index: {path: index.html, title: Weather}
    compress: {encodings: [br, gzip, zstd]}
`

// decode returns the plain bytes of a sidecar.
func decode(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	var err error
	switch filepath.Ext(name) {
	case ".gz":
		r, err = gzip.NewReader(bytes.NewReader(b))
	case ".br":
		r = brotli.NewReader(bytes.NewReader(b))
	case ".zst":
		var d *zstd.Decoder
		d, err = zstd.NewReader(bytes.NewReader(b))
		if err == nil {
			defer d.Close()
			r = d
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// checkSidecars asserts that root holds exactly the sidecars want names (by
// plain path) and that each decodes to its plain file, recorded as the
// catalog's kind generated with the transform and source path of spec 3.4.
func checkSidecars(t *testing.T, root string, want map[string]string) {
	t.Helper()
	cat := checkInvariants(t, root, nil, &catalog.Catalog{}, nil)
	recs := cat.Index()
	found := 0
	for _, o := range cat.Outputs {
		plain, ok := catalog.SidecarOf(o.Path, o.Transform)
		if !ok {
			continue
		}
		found++
		src, ok := want[plain]
		if !ok {
			t.Errorf("%s: a sidecar of %s, which should have none", o.Path, plain)
			continue
		}
		if o.Kind != catalog.KindGenerated || o.SourcePath != src || recs[plain] == nil {
			t.Errorf("%s: record %+v (plain recorded: %v)", o.Path, o, recs[plain] != nil)
		}
		if got := decode(t, o.Path, readFile(t, filepath.Join(root, o.Path))); !bytes.Equal(got, readFile(t, filepath.Join(root, plain))) {
			t.Errorf("%s does not decode to %s", o.Path, plain)
		}
	}
	if found != 3*len(want) {
		t.Errorf("%d sidecars, want 3 for each of %v", found, want)
	}
}

// TestPrecompressedSidecars: sidecars beside every matching output at least
// min_size long (rendered pages and the index included), each decoding to its
// output; a rerun is skip_same; the same bundle gives the same bytes in a
// second root; a changed file rewrites its sidecars and only them; dropping a
// file drops its sidecars (replacement), and so does dropping compression.
func TestPrecompressedSidecars(t *testing.T) {
	f := yamlFixture(t, strings.ReplaceAll(compressYAML, "WORKFLOW", "replacement"))
	a := f.app(nil)
	long := strings.Repeat("Rain at noon, then sun. ", 100)
	files := map[string]string{"report.md": "# Weather\n\n" + long, "data.csv": strings.Repeat("1,2,3\n", 300),
		"small.txt": "tiny", "img/chart.png": long}
	f.bundle("b", "w.1", files)
	if d := f.run(a, "p"); d.Status != report.StatusOK || d.Action != "publish_new" {
		t.Fatalf("run 1: %s %s", d.Action, d.Status)
	}
	want := map[string]string{"report.html": "report.md", "report.md": "report.md", "data.csv": "data.csv", "index.html": ""}
	checkSidecars(t, f.root, want)
	for _, p := range []string{"report.html.br", "data.csv.gz", "index.html.zst", "report.md.zst"} {
		if !bytes.Equal(readFile(t, filepath.Join(f.root, p)), readFile(t, filepath.Join(f.dir, "www2", p))) {
			t.Errorf("%s differs between two roots of the same bundle", p)
		}
	}
	if d := f.run(a, "p"); d.Action != "skip_same" {
		t.Fatalf("rerun: %s, want skip_same", d.Action)
	}

	files["data.csv"] = strings.Repeat("4,5,6\n", 300)
	f.bundle("b", "w.2", files)
	d := f.run(a, "p")
	for _, o := range d.Plan.Items { // (the page and the index name the new bundle)
		rewritten := o.Op == "create" || o.Op == "overwrite"
		if strings.HasPrefix(o.Path, "data.csv") && !rewritten || strings.HasPrefix(o.Path, "report.md") && rewritten {
			t.Errorf("changed data.csv: %s %s", o.Op, o.Path)
		}
	}
	checkSidecars(t, f.root, want)

	delete(files, "data.csv")
	f.bundle("b", "w.3", files)
	f.run(a, "p")
	delete(want, "data.csv")
	checkSidecars(t, f.root, want)

	f.cfg.Destinations[0].Compress = nil
	f.cfg.Destinations[0].Workflow = "additive"
	f.run(a, "p")
	checkSidecars(t, f.root, map[string]string{})
}

// TestCompressedBytesChecked: bytes compressed at write time that are not the
// ones planned (the source changed after planning) fail the read, so the write
// fails rather than record them; bytes kept from planning are served as planned.
func TestCompressedBytesChecked(t *testing.T) {
	var z compressed
	plain := &render.Output{Path: "a.html", Content: []byte(strings.Repeat("a", 5000))}
	o := render.Output{Path: "a.html.gz", Encoding: "gzip", Plain: plain}
	open := func(o *render.Output) (io.ReadCloser, error) { return openOutput(context.Background(), nil, o, &z) }
	outs := []render.Output{o}
	if err := z.digest(context.Background(), plan.Input{}, outs, open); err != nil {
		t.Fatal(err)
	}
	var fresh compressed // as when the bytes were over the cache's budget
	src, _ := open(plain)
	if _, err := io.ReadAll(fresh.open(context.Background(), &outs[0], src)); err != nil {
		t.Fatalf("planned bytes: %v", err)
	}
	changed := &render.Output{Path: "a.html", Content: []byte(strings.Repeat("b", 5000))}
	src, _ = open(changed)
	r := fresh.open(context.Background(), &outs[0], src)
	if _, err := io.ReadAll(r); err == nil || !strings.Contains(err.Error(), "not the") {
		t.Fatalf("changed source: %v, want a mismatch", err)
	}
	r.Close()
	src, _ = open(changed)
	if got, err := io.ReadAll(z.open(context.Background(), &outs[0], src)); err != nil || int64(len(got)) != outs[0].Size {
		t.Fatalf("kept bytes: %d bytes, %v", len(got), err)
	}
	if bundle.CheckSHA256(outs[0].SHA256) != nil || outs[0].Size == 0 {
		t.Errorf("digest left %q %d", outs[0].SHA256, outs[0].Size)
	}
}

// TestSidecarsServedByNginx: a published root served by a real nginx with
// gzip_static and brotli_static (as docs/cookbook.md configures it): a client
// accepting br gets the brotli sidecar, one accepting gzip the gzip one, any
// other the page itself, and all of them decode to exactly the page; a file
// below min_size is served plain to everyone.
func TestSidecarsServedByNginx(t *testing.T) {
	f := yamlFixture(t, strings.ReplaceAll(compressYAML, "WORKFLOW", "additive"))
	f.bundle("b", "w.1", map[string]string{"report.md": "# Weather\n\n" + strings.Repeat("Rain at noon, then sun. ", 100),
		"small.txt": "tiny"})
	if d := f.run(f.app(nil), "p"); d.Status != report.StatusOK {
		t.Fatalf("run: %s %s", d.Action, d.Status)
	}
	base := nginxtest.Start(t, f.root)
	for _, p := range []string{"report.html", "index.html", "report.md", "small.txt"} {
		plain := readFile(t, filepath.Join(f.root, p))
		for _, tc := range []struct{ accept, want string }{{"br", "br"}, {"gzip", "gzip"}, {"br, gzip", "br"}, {"", ""}, {"zstd", ""}} {
			if p == "small.txt" {
				tc.want = ""
			}
			body, enc := nginxtest.Get(t, base+"/"+p, tc.accept)
			if enc != tc.want {
				t.Errorf("%s, Accept-Encoding %q: Content-Encoding %q, want %q", p, tc.accept, enc, tc.want)
				continue
			}
			if enc != "" {
				body = decode(t, p+map[string]string{"br": ".br", "gzip": ".gz"}[enc], body)
			}
			if !bytes.Equal(body, plain) {
				t.Errorf("%s, Accept-Encoding %q: the body does not decode to the page", p, tc.accept)
			}
		}
	}
}

// TestSidecarsOnRemoteDirectoryStores: the sidecars of spec 3.4 on SFTP and
// FTP, as on local disk: each decodes to its output as the server stores
// them, the catalog is truthful, a rerun is skip_same.
func TestSidecarsOnRemoteDirectoryStores(t *testing.T) {
	for _, b := range faultBackends {
		if !strings.HasPrefix(b.name, "sftp") && !strings.HasPrefix(b.name, "ftp") {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			f := yamlFixture(t, strings.ReplaceAll(compressYAML, "WORKFLOW", "replacement"))
			f.cfg.Destinations = f.cfg.Destinations[:1]
			f.cfg.Pipelines[0].Destinations = []string{"site"}
			a := f.app(nil)
			a.Open = func(context.Context, *config.Destination, string) (storage.Store, error) { return keepOpen{st}, nil }
			f.bundle("b", "w.1", map[string]string{"report.md": "# Weather\n\n" + strings.Repeat("Rain at noon. ", 200)})
			if d := f.run(a, "p"); d.Status != report.StatusOK || d.Action != "publish_new" {
				t.Fatalf("run: %s %s", d.Action, d.Status)
			}
			cat := storeInvariants(t, st, nil, &catalog.Catalog{}, nil)
			sidecars := 0
			for _, o := range cat.Outputs {
				plain, ok := catalog.SidecarOf(o.Path, o.Transform)
				if !ok {
					continue
				}
				sidecars++
				got, _, err := st.Get(t.Context(), o.Path)
				want, _, err2 := st.Get(t.Context(), plain)
				if err != nil || err2 != nil || !bytes.Equal(decode(t, o.Path, got), want) {
					t.Errorf("%s does not decode to %s (%v, %v)", o.Path, plain, err, err2)
				}
			}
			if sidecars != 9 { // report.html, report.md and index.html, three encodings each
				t.Errorf("%d sidecars, want 9", sidecars)
			}
			if d := f.run(a, "p"); d.Action != "skip_same" {
				t.Errorf("rerun: %s, want skip_same", d.Action)
			}
		})
	}
}
