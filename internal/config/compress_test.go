package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeCompress: the compress block of spec 3.4, its defaults and the
// problems it reports, each at its field and line.
func TestDecodeCompress(t *testing.T) {
	local := strings.Replace(minimal, "    path: ./out\n", "    path: ./out\n    links: {base_url: \"https://r.example.com/\"}\n", 1) // extras start at line 10
	cfg, err := Decode([]byte(local+"    compress: {encodings: [br, gzip], match: [\"**/*.html\"], min_size: 0}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Compress{Encodings: []string{"br", "gzip"}, Match: []string{"**/*.html"}, MinSize: 0, Line: 10}, cfg.Destinations[0].Compress); diff != "" {
		t.Errorf("compress (-want +got):\n%s", diff)
	}
	cfg, err = Decode([]byte(local+"    compress: {encodings: [zstd]}\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Destinations[0].Compress; !cmp.Equal(c.Match, DefaultCompressMatch) || c.MinSize != DefaultCompressMinSize {
		t.Errorf("defaults: %+v", c)
	}
	if cfg, err := Decode([]byte(local), "c.yaml"); err != nil || cfg.Destinations[0].Compress != nil {
		t.Errorf("without a block: %v, %v", cfg.Destinations[0].Compress, err)
	}
	for _, tc := range []struct{ name, block, field, msg string }{
		{"no encodings", "{min_size: 10}", "destinations[0].compress.encodings", "is required"},
		{"empty encodings", "{encodings: []}", "destinations[0].compress.encodings", "at least one encoding is required"},
		{"unknown encoding", "{encodings: [gz]}", "destinations[0].compress.encodings[0]", "gz"},
		{"encoding twice", "{encodings: [gzip, gzip]}", "destinations[0].compress.encodings[1]", `encoding "gzip" is listed twice`},
		{"negative min_size", "{encodings: [br], min_size: -1}", "destinations[0].compress.min_size", "must be 0 or more"},
		{"bad match", "{encodings: [br], match: [\"*.{html\"]}", "destinations[0].compress.match[0]", "malformed"},
		{"unknown field", "{encodings: [br], level: 9}", "destinations[0].compress", `unknown field "level"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(local+"    compress: "+tc.block+"\n"), "distributor.yaml")
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want a config error, got %v", err)
			}
			for _, p := range ce.Problems {
				if p.Line == 10 && p.Field == tc.field && strings.Contains(p.Msg, tc.msg) {
					return
				}
			}
			t.Errorf("no problem at field %q containing %q; got:\n%v", tc.field, tc.msg, err)
		})
	}
}
