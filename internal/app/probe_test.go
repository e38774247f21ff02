package app

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestServerIgnoringConditionsIsRefused: an S3 server that accepts
// conditional writes but ignores the conditions (here: gofakes3 behind a
// gateway that drops If-None-Match and If-Match) is refused before anything
// is written; with single_writer: true the operator takes that risk, and
// every run warns.
func TestServerIgnoringConditionsIsRefused(t *testing.T) {
	mem := s3mem.New()
	if err := mem.CreateBucket("reports"); err != nil {
		t.Fatal(err)
	}
	inner := gofakes3.New(mem, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("If-None-Match")
		r.Header.Del("If-Match")
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"}
	st, err := s3.New(context.Background(), s3.Options{Bucket: "reports", Prefix: "site", Region: "us-east-1",
		Endpoint: srv.URL, PathStyle: true, Getenv: func(k string) string { return env[k] }, Transport: srv.Client().Transport})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	for _, single := range []bool{false, true} {
		dir := t.TempDir()
		yaml := "pipelines:\n  - {id: mine, source: mine, destinations: [site]}\ndestinations:\n  - {id: site, backend: local, path: www"
		if single {
			yaml += ", single_writer: true"
		}
		yaml += "}\n"
		if err := os.WriteFile(filepath.Join(dir, "distributor.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(filepath.Join(dir, "distributor.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{t: t, dir: dir, cfg: cfg}
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
