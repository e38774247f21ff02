package app

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestCompressedObjects runs against the real S3 servers, fake-gcs-server and
// Azurite: with gzip among compress.encodings each matching object is stored
// gzip-compressed with Content-Encoding: gzip, as an independent client reads
// it, and decodes to the page; an object below min_size or not matching has
// no Content-Encoding; no sidecar is written (br is ignored, with a warning);
// verify finds every object ok and a rerun is skip_same.
func TestCompressedObjects(t *testing.T) {
	for _, b := range headersBackends {
		t.Run(b.name, func(t *testing.T) {
			h := newHeadersRun(t, b.open(t))
			cfg := headersConfig(t, h.f, h.block+"    compress: {encodings: [br, gzip], min_size: 8}\n", "")
			d := h.run(t, cfg, false)
			if !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "compress.encodings br: ignored") }) {
				t.Errorf("warnings %q: none says br is ignored", d.Warnings)
			}
			want := map[string]string{"index.html": "gzip", "style.css": "", "img/chart.svg": "", "data/today.csv": "gzip",
				"notes.txt": ""} // style.css and chart.svg are below min_size
			dst := &cfg.Destinations[0]
			st, err := h.a.Open(t.Context(), dst, dst.Path)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for p, enc := range want {
				if got := h.root.head(t, p).ContentEncoding; got != enc {
					t.Errorf("%s: Content-Encoding %q, want %q", p, got, enc)
				}
				stored, _, err := st.Get(t.Context(), p)
				if err != nil {
					t.Fatal(err)
				}
				if enc == "gzip" {
					stored = decode(t, p+".gz", stored)
				}
				if p == "index.html" {
					if !bytes.Contains(stored, []byte("<h1")) {
						t.Errorf("index.html decodes to no page: %q", stored)
					}
				} else if src := readFile(t, h.f.dir+"/mine/"+p); !bytes.Equal(stored, src) {
					t.Errorf("%s: stored bytes decode to %q, want %q", p, stored, src)
				}
				if _, _, err := st.Get(t.Context(), p+".gz"); err == nil {
					t.Errorf("%s.gz: a sidecar on an object store", p)
				}
			}
			v, err := h.a.Verify(t.Context(), cfg, VerifyOptions{})
			if err != nil || v.OK != len(want) || len(v.Corrupt)+len(v.Missing) > 0 {
				t.Errorf("verify: %d ok, %v %v, %v", v.OK, v.Corrupt, v.Missing, err)
			}
			if d := h.run(t, cfg, false); d.Action != "skip_same" {
				t.Errorf("rerun: %s, want skip_same", d.Action)
			}
		})
	}
}
