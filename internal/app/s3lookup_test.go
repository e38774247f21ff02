package app

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// catalogOf encodes a valid catalog recording paths (sorted) for another
// pipeline.
func catalogOf(t *testing.T, paths ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	enc, err := catalog.NewEncoder(&buf, catalog.Header{DistributorVersion: "test", CreatedAt: t0, UpdatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	src := catalog.Source{ID: "theirs.one", Digest: fmt.Sprintf("sha256:%064x", 1), Created: t0}
	for i, p := range paths {
		o := catalog.Output{Path: p, PipelineID: "theirs", DestinationID: "site-theirs", Source: src, Kind: catalog.KindSource,
			SHA256: fmt.Sprintf("sha256:%064x", i), Size: 10, CreatedAt: t0, UpdatedAt: t0}
		if err := enc.Add(&o); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestS3LookupsOfNewPaths: over a valid catalog a run on S3 looks up a new
// path, what lies below it and its parent keys with one bounded listing of
// the top-most parent key the catalog vouches for no output under (key by
// key when that prefix holds more than a page): an unrecorded object at
// the path, below it or at an unvouched parent key refuses the plan
// (fail_unmanaged), keys that merely share the prefix do not, and a parent
// key below which the catalog records outputs is not looked up (on S3 an
// object there is another key, which the write cannot touch).
//
// It runs on each S3 server the tests have: the listing's page size is the
// server's to honour (a case whose keys a file-system-backed server cannot
// hold together is skipped there).
func TestS3LookupsOfNewPaths(t *testing.T) {
	for _, server := range []struct {
		name  string
		start func(t *testing.T) *s3test.Server
	}{
		{"gofakes3", func(t *testing.T) *s3test.Server { return s3test.Start(t) }},
		{"versitygw", func(t *testing.T) *s3test.Server { return s3test.Versitygw(t) }},
		{"seaweedfs", func(t *testing.T) *s3test.Server { return s3test.Weed(t) }},
	} {
		t.Run(server.name, func(t *testing.T) { testS3Lookups(t, server.start(t)) })
	}
}

func testS3Lookups(t *testing.T, srv *s3test.Server) {
	const planned = "daily/2026-06-20/report.html"
	many := func(dir string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s/%03d.html", dir, i))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		records []string
		objects []string
		want    string
	}{
		{"nothing there", []string{"archive/a.html"}, nil, "upsert_additive"},
		{"object at the path", []string{"archive/a.html"}, []string{planned}, "fail_unmanaged"},
		{"object below the path", []string{"archive/a.html"}, []string{planned + "/x"}, "fail_unmanaged"},
		{"object at the top parent key", []string{"archive/a.html"}, []string{"daily"}, "fail_unmanaged"},
		{"object at the inner parent key", []string{"archive/a.html"}, []string{"daily/2026-06-20"}, "fail_unmanaged"},
		{"keys sharing the prefix", []string{"archive/a.html"}, []string{"daily-old/x", "dailyX", "daily/2026-06-200"}, "upsert_additive"},
		{"more than a page under the prefix", []string{"archive/a.html"}, many("daily/old", coverPage+20), "upsert_additive"},
		{"more than a page, object at the parent key", []string{"archive/a.html"},
			append(many("daily/old", coverPage+20), "daily"), "fail_unmanaged"},
		{"more than a page, object below the path", []string{"archive/a.html"},
			append(many("daily/old", coverPage+20), planned+"/x"), "fail_unmanaged"},
		{"parent key with recorded outputs below", []string{"daily/2026-06-19/report.html"}, []string{"daily"}, "upsert_additive"},
		{"unvouched inner parent key under a vouched one", []string{"daily/2026-06-19/report.html"},
			[]string{"daily", "daily/2026-06-20"}, "fail_unmanaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := "lookups/" + rand.Text()[:10]
			st := srv.Open(t, prefix)
			if _, err := storage.PutIf(t.Context(), st, catalog.FileName, catalogOf(t, tc.records...), ""); err != nil {
				t.Fatal(err)
			}
			// The recorded outputs are there (a truthful root), then the
			// unmanaged objects. A server on a file system (versitygw's
			// posix backend) cannot hold an object at a key that others
			// continue with "/": where the case needs one, it does not
			// arise there.
			put := func(p, data string) {
				if _, err := st.Put(t.Context(), p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
					if strings.Contains(err.Error(), "HTTP 409") {
						t.Skipf("the server cannot hold this root: %v", err)
					}
					t.Fatal(err)
				}
			}
			for _, p := range tc.records {
				put(p, "0123456789")
			}
			for _, p := range tc.objects {
				put(p, "unmanaged")
			}
			f := newFixture(t, config.WorkflowAdditive)
			f.bundle("mine", "mine.one", map[string]string{planned: "<p>new</p>\n"})
			cfg := writeConfig(t, f.dir, "distributor.yaml", s3SiteYAML(srv, srv.Bucket, prefix, "    publish: {html: false, source: all}\n"))
			a := f.app(nil)
			a.Getenv = srv.Getenv
			rep, err := a.Run(t.Context(), cfg, RunOptions{Pipelines: []string{"mine"}})
			if err != nil {
				t.Fatal(err)
			}
			d := rep.Pipelines[0].Destinations[0]
			if d.Action != tc.want || (tc.want == "upsert_additive") != (d.Status == report.StatusOK) {
				t.Fatalf("%s %s (%s), want %s", d.Status, d.Action, str(d.Error), tc.want)
			}
			got, _, err := st.Get(t.Context(), planned)
			switch {
			case tc.want == "upsert_additive" && (err != nil || string(got) != "<p>new</p>\n"):
				t.Errorf("%s after the run: %q %v", planned, got, err)
			case tc.want != "upsert_additive" && slices.Contains(tc.objects, planned) && string(got) != "unmanaged":
				t.Errorf("the unmanaged %s was overwritten: %q", planned, got)
			}
		})
	}
}
