package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage/registry"
)

var fuzzTime = time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)

func FuzzDecode(f *testing.F) {
	f.Add([]byte(fullConfig))
	f.Add([]byte(minimal))
	f.Add([]byte(""))
	f.Add([]byte("pipelines: []\n"))
	f.Add([]byte("- a\n"))
	f.Add([]byte("a: &a [*a]\npipelines: *a\n"))
	f.Add([]byte("pipelines: [{id: p, source: '~', destinations: [d, d]}]\ndestinations: [{id: d, backend: s3, path: '{x', s3: {bucket: b}}]\n"))
	f.Add([]byte(minimal + "    paths: {prefix: '{source_date}/', rename: {a.md: b.md, c.md: b.md, 1: 2}}\n    retention: {prune: {older_than: 1d1h, keep_min: 99999999999999999999}}\n"))
	f.Add([]byte(minimal + "notifications:\n  - {id: n, webhook: {url: 'http://h', secret_env: $X}, on: [published, on, 1]}\n"))
	f.Add([]byte(minimal + "---\n---\n"))
	f.Add([]byte("pipelines:\n\t- id: p\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Decode(data, "fuzz.yaml")
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *Error: %v", err, err)
			}
			if cfg != nil {
				t.Fatal("config returned with an error")
			}
			if len(ce.Problems) == 0 {
				t.Fatal("*Error without problems")
			}
			for _, p := range ce.Problems {
				if p.Msg == "" || p.Line < 0 {
					t.Fatalf("bad problem %+v", p)
				}
			}
			if strings.Count(err.Error(), "\n")+1 != len(ce.Problems) {
				t.Fatalf("Error() does not print one problem per line:\n%s", err)
			}
			return
		}
		if len(cfg.Pipelines) == 0 {
			t.Fatal("valid config without pipelines")
		}
		for _, p := range cfg.Pipelines {
			for _, id := range p.Destinations {
				if _, ok := cfg.Destination(id); !ok {
					t.Fatalf("pipeline %s references missing destination %s", p.ID, id)
				}
			}
		}
		for _, d := range cfg.Destinations {
			if b, _ := registry.Lookup(d.Backend); (d.Settings != nil) != (len(b.Fields) > 0) {
				t.Fatalf("destination %s: backend block mismatch", d.ID)
			}
			if _, err := Expand(d.Path, Vars{PipelineID: "p", DestinationID: "d", SourceID: "s", SourceCreated: fuzzTime}); err != nil {
				t.Fatalf("valid path does not expand: %v", err)
			}
		}
	})
}
