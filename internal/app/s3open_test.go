package app

import (
	"context"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// TestS3MissingBucketFailsBeforePlanning: opening an S3 destination sends
// no request (see s3.Options.ForRoot), so a missing bucket is reported by the run's
// first request, the catalog read, as clearly as a check at open would:
// naming the root and saying that the bucket does not exist, before
// anything is planned or written.
func TestS3MissingBucketFailsBeforePlanning(t *testing.T) {
	srv := s3test.Start(t)
	f := newFixture(t, config.WorkflowAdditive)
	f.bundle("mine", "mine.one", map[string]string{"a.txt": "a"})
	cfg := writeConfig(t, f.dir, "distributor.yaml", s3SiteYAML(srv, "nope", "site", ""))
	a := f.app(nil)
	a.Getenv = srv.Getenv
	rep, err := a.Run(t.Context(), cfg, RunOptions{Pipelines: []string{"mine"}})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Pipelines[0].Destinations[0]
	msg := str(d.Error)
	if d.Status == report.StatusOK || d.Action != "" || !strings.Contains(msg, "s3://nope/site") ||
		!strings.Contains(msg, "NoSuchBucket") || !strings.Contains(msg, "the bucket does not exist") {
		t.Errorf("run into a missing bucket: %s, action %q: %s", d.Status, d.Action, msg)
	}
}

// TestCatalogUnchangedS3: on S3, whose modification times have whole
// seconds, the run compares the catalog's ETag with the one it read: a
// catalog written a moment ago and untouched since counts as unchanged (no
// second plan under the lock), one rewritten with the same size as
// changed.
func TestCatalogUnchangedS3(t *testing.T) {
	ctx := context.Background()
	st := s3test.Start(t).Open(t, "site")
	req := planRequest{props: st.Properties()}
	r, err := readPlanRoot(ctx, st, req)
	if err != nil {
		t.Fatal(err)
	}
	if !catalogUnchanged(ctx, st, r) {
		t.Error("absent then and now: want unchanged")
	}
	doc := archiveCatalog(t, 3)
	if _, err := storage.PutIf(ctx, st, catalog.FileName, doc, ""); err != nil {
		t.Fatal(err)
	}
	if catalogUnchanged(ctx, st, r) {
		t.Error("absent then, present now: want changed")
	}
	r.Close()
	if r, err = readPlanRoot(ctx, st, req); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Version == "" || !catalogUnchanged(ctx, st, r) {
		t.Errorf("written just now, untouched since the read (version %q): want unchanged", r.Version)
	}
	same := []byte(strings.Replace(string(doc), "theirs", "THEIRS", 1))
	if len(same) != len(doc) {
		t.Fatal("the rewrite must keep the size")
	}
	if _, err := storage.PutIf(ctx, st, catalog.FileName, same, r.Version); err != nil {
		t.Fatal(err)
	}
	if catalogUnchanged(ctx, st, r) {
		t.Error("rewritten with the same size in the same second: want changed")
	}
}
