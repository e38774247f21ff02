package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/retry"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// TestS3BeginListsTheReservedNames: on S3 the one listing of the reserved
// names that reads the lock back for the proof also finds a dead run's
// journal (the root is recovered before anything else) and, with none,
// tells the catalog's version under the lock; a recovery leaves that
// unknown, so the run plans again.
func TestS3BeginListsTheReservedNames(t *testing.T) {
	ctx := context.Background()
	raw := s3test.Start(t).Open(t, "site")
	st := retry.New(raw, retry.Options{}) // as production opens it
	a := New("test", nil)
	begin := func() (journalFound bool, catalog storage.Version, known bool) {
		t.Helper()
		tx, err := a.begin(ctx, st, &config.Destination{}, "run", 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.End()
		catalog, known = tx.CatalogVersion()
		return tx.Recovery != nil, catalog, known
	}
	// A dead run created orphan.txt and left its journal.
	sum := sha256.Sum256([]byte("orphan"))
	digest := "sha256:" + hex.EncodeToString(sum[:])
	now := time.Now().UTC().Truncate(time.Second)
	rec := catalog.Output{Path: "orphan.txt", PipelineID: "p", DestinationID: "d", Kind: catalog.KindSource,
		Source: catalog.Source{ID: "s.1", Digest: digest, Created: now}, SHA256: digest, Size: 6, CreatedAt: now, UpdatedAt: now}
	data, err := journal.Encode(&journal.Journal{RunID: "dead", Command: "run", Started: now,
		Ops: []journal.Op{{Op: journal.OpWrite, Path: "orphan.txt", SHA256: digest, Size: 6, Record: &rec}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.PutIf(ctx, raw, journal.Name, data, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Put(ctx, "orphan.txt", strings.NewReader("orphan"), 6, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if recovered, _, known := begin(); !recovered || known {
		t.Fatalf("with a dead run's journal: recovered %v, catalog version known %v; want a recovery, and the version unknown", recovered, known)
	}
	if _, _, err := raw.Get(ctx, journal.Name); err == nil {
		t.Fatal("the journal is still there after the recovery")
	}
	if _, _, err := raw.Get(ctx, "orphan.txt"); err == nil {
		t.Fatal("the recovery left the dead run's unrecorded orphan.txt")
	}
	if recovered, got, known := begin(); recovered || !known || got != "" {
		t.Fatalf("without a journal or catalog: recovered %v, catalog version %q known %v; want none, \"\" known", recovered, got, known)
	}
	v, err := storage.PutIf(ctx, raw, catalog.FileName, catalogOf(t, "a.txt"), "")
	if err != nil {
		t.Fatal(err)
	}
	if recovered, got, known := begin(); recovered || !known || got != v {
		t.Fatalf("without a journal: recovered %v, catalog version %q known %v; want none, %q known", recovered, got, known, v)
	}
}
