package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/retry"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// archiveCatalog encodes a valid catalog of n records owned by another
// pipeline, 100 per directory.
func archiveCatalog(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	encodeArchive(t, &buf, n)
	return buf.Bytes()
}

// encodeArchive writes archiveCatalog's document to w, record by record.
func encodeArchive(t testing.TB, w io.Writer, n int) {
	t.Helper()
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	enc, err := catalog.NewEncoder(w, catalog.Header{DistributorVersion: "test", CreatedAt: t0, UpdatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	src := catalog.Source{ID: "archive.2026-06-01", Digest: fmt.Sprintf("sha256:%064x", 1), Created: t0}
	for i := range n {
		p := fmt.Sprintf("archive/%05d/report-%07d.html", i/100, i)
		o := catalog.Output{Path: p, PipelineID: "theirs", DestinationID: "site-theirs", Source: src, Kind: catalog.KindSource,
			URL: "https://reports.example.com/" + p, SHA256: fmt.Sprintf("sha256:%064x", i), Size: int64(1000 + i),
			CreatedAt: t0, UpdatedAt: t0}
		if err := enc.Add(&o); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}

// additiveS3Requests is what an additive run of one new file sends to an
// S3 root with a valid catalog, by method (docs/performance.md explains
// each): the catalog read, one listing (a GET) that looks up the new path,
// what lies below it and its parent keys, the lock, the proof of conditional writes
// on the lock object, the journal, the file, the catalog, and the lock's
// release. noopS3Requests is what the no-op rerun sends.
var (
	additiveS3Requests = map[string]int{"GET": 4, "PUT": 6, "DELETE": 2}
	noopS3Requests     = map[string]int{"GET": 1, "HEAD": 1}
)

// TestS3RequestsDoNotGrowWithTheRoot publishes one new file into S3 roots
// whose catalogs hold 200 and 5,000 records, on each S3 server the tests
// have (in-process gofakes3, and versitygw and SeaweedFS when configured):
// the requests sent, by method, are exactly additiveS3Requests for both
// sizes (no listing of the root, one read of the catalog, no second plan
// although the catalog was written a moment before), and those of the
// no-op rerun exactly noopS3Requests.
func TestS3RequestsDoNotGrowWithTheRoot(t *testing.T) {
	for _, server := range []struct {
		name  string
		start func(t *testing.T) *s3test.Server
	}{
		{"gofakes3", func(t *testing.T) *s3test.Server { return s3test.Start(t) }},
		{"versitygw", func(t *testing.T) *s3test.Server { return s3test.Versitygw(t) }},
		{"seaweedfs", func(t *testing.T) *s3test.Server { return s3test.Weed(t) }},
	} {
		t.Run(server.name, func(t *testing.T) {
			testS3RequestsDoNotGrow(t, server.start(t))
		})
	}
}

func testS3RequestsDoNotGrow(t *testing.T, srv *s3test.Server) {
	sum := func(m map[string]int) (n int) {
		for _, c := range m {
			n += c
		}
		return n
	}
	counts := map[int][2]map[string]int{}
	for _, n := range []int{200, 5000} {
		prefix := "scale/" + rand.Text()[:10]
		st := srv.Open(t, prefix)
		if _, err := storage.PutIf(t.Context(), st, catalog.FileName, archiveCatalog(t, n), ""); err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, config.WorkflowAdditive)
		f.bundle("mine", "mine.one", map[string]string{"daily/2026-06-20/report.html": "<p>new</p>\n"})
		cfg := writeConfig(t, f.dir, "distributor.yaml", s3SiteYAML(srv, srv.Bucket, prefix, "    publish: {html: false, source: all}\n"))
		counter := &requestCounter{byMethod: map[string]int{}}
		a := f.app(nil)
		a.Getenv = srv.Getenv
		a.Open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
			opts := d.Settings.(*s3.Options).ForRoot(root, srv.Getenv)
			tr, err := minio.DefaultTransport(strings.HasPrefix(srv.URL, "https://"))
			if err != nil {
				return nil, err
			}
			counter.next = tr
			opts.Transport = counter
			st, err := s3.New(ctx, opts)
			if err != nil {
				return nil, err
			}
			return retry.New(st, retry.Options{}), nil
		}
		var got [2]map[string]int
		for i, want := range []string{"upsert_additive", "skip_same"} {
			rep, err := a.Run(t.Context(), cfg, RunOptions{Pipeline: "mine"})
			if err != nil {
				t.Fatal(err)
			}
			d := rep.Pipelines[0].Destinations[0]
			if d.Status != report.StatusOK || d.Action != want || d.Counts.Retained != n {
				t.Fatalf("%d records, run %d: %s %s retained %d (%v), want ok %s retained %d", n, i+1, d.Status, d.Action, d.Counts.Retained, d.Error, want, n)
			}
			got[i] = counter.take()
		}
		t.Logf("%d records: +1 file: %v (%d requests); no-op rerun: %v", n, got[0], sum(got[0]), got[1])
		counts[n] = got
		data, _, err := st.Get(t.Context(), catalog.FileName)
		if err != nil {
			t.Fatal(err)
		}
		c, err := catalog.Parse(data)
		if err != nil || len(c.Outputs) != n+1 {
			t.Fatalf("catalog after the run: %v, %d records", err, len(c.Outputs))
		}
	}
	if diff := cmp.Diff(counts[200], counts[5000]); diff != "" {
		t.Errorf("requests depend on the root's size (-200 records +5000 records):\n%s", diff)
	}
	if diff := cmp.Diff(additiveS3Requests, counts[200][0]); diff != "" {
		t.Errorf("additive +1 file: %d requests, want %d (-want +got):\n%s", sum(counts[200][0]), sum(additiveS3Requests), diff)
	}
	if diff := cmp.Diff(noopS3Requests, counts[200][1]); diff != "" {
		t.Errorf("no-op rerun: %d requests, want %d (-want +got):\n%s", sum(counts[200][1]), sum(noopS3Requests), diff)
	}
}
