package app

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestServerIgnoringConditionsIsRefused: an S3 server that accepts
// conditional writes but ignores the conditions (here: gofakes3 behind a
// gateway that drops If-None-Match and If-Match) is refused before anything
// is written; with single_writer: true the operator takes that risk, and
// every run warns.
func TestServerIgnoringConditionsIsRefused(t *testing.T) {
	st := s3test.Start(t, s3test.TLS(), s3test.Middleware(s3test.DropHeaders("If-None-Match", "If-Match"))).Open(t, "site")

	for _, single := range []bool{false, true} {
		yaml := "pipelines:\n  - {id: mine, source: mine, destinations: [site]}\ndestinations:\n  - {id: site, backend: local, path: www"
		if single {
			yaml += ", single_writer: true"
		}
		f := yamlFixture(t, yaml+"}\n")
		f.bundle("mine", "mine.one", map[string]string{"a.txt": "a", "b/c.txt": "c"})
		var logs bytes.Buffer
		a := New("test", slog.New(slog.NewTextHandler(&logs, nil)))
		a.Open = func(context.Context, *config.Destination, string) (storage.Store, error) { return keepOpen{st}, nil }
		d := f.run(a, "mine")
		if !single {
			if d.Status == report.StatusOK || !strings.Contains(str(d.Error), "does not enforce exclusive create") {
				t.Fatalf("run against a server that ignores conditions: %s %s", d.Status, str(d.Error))
			}
			if snap := storagetest.Snapshot(t, st); len(snap) != 0 {
				t.Fatalf("refused run wrote %v", snap)
			}
			continue
		}
		if d.Status != report.StatusOK {
			t.Fatalf("single_writer run: %s %s", d.Status, str(d.Error))
		}
		if !strings.Contains(logs.String(), "does not enforce conditional writes") {
			t.Errorf("no warning on a single_writer run against an unproven server: %s", logs.String())
		}
	}
}
