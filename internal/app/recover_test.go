package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

// TestRecoverRemovesCutShortCreates: after a power loss before a deferred
// store's Sync, a new file can hold partial bytes. Recovery removes any file
// at a path the dead run created, whatever its bytes, and leaves a replace
// whose new bytes are not in place alone.
func TestRecoverRemovesCutShortCreates(t *testing.T) {
	ctx := context.Background()
	st, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	put := func(p, data string) {
		if err := st.Put(ctx, p, strings.NewReader(data), int64(len(data))); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	src := catalog.Source{ID: "s", Digest: "sha256:" + strings.Repeat("0", 64), Created: now}
	rec := func(p, data string) catalog.Output {
		sum, _, _ := hashBytes(data)
		return catalog.Output{Path: p, PipelineID: "p", DestinationID: "d", Source: src, Kind: catalog.KindSource,
			SHA256: sum, Size: int64(len(data)), CreatedAt: now, UpdatedAt: now}
	}
	old := rec("kept.txt", "old bytes")
	c := &catalog.Catalog{SchemaVersion: 4, CreatedAt: now, UpdatedAt: now, Outputs: []catalog.Output{old}}
	data, _ := catalog.Encode(c)
	v, err := st.PutIf(ctx, catalog.FileName, data, "")
	if err != nil {
		t.Fatal(err)
	}
	put("kept.txt", "old bytes") // the replace never happened
	put("new.txt", "cut sh")     // a create cut short: not the planned bytes
	newRec := rec("new.txt", "cut short by power loss")
	keptRec := rec("kept.txt", "new bytes")
	j := &journal.Journal{RunID: "dead", Command: "run", Started: now, BaseVersion: string(v), Ops: []journal.Op{
		{Op: journal.OpWrite, Path: "new.txt", SHA256: newRec.SHA256, Size: newRec.Size, Record: &newRec},
		{Op: journal.OpWrite, Path: "kept.txt", Existed: true, SHA256: keptRec.SHA256, Size: keptRec.Size, Record: &keptRec},
	}}
	jd, _ := journal.Encode(j)
	if _, err := st.PutIf(ctx, journal.Name, jd, ""); err != nil {
		t.Fatal(err)
	}
	r, err := Recover(ctx, st, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Removed) != 1 || r.Removed[0] != "new.txt" || len(r.RolledForward) != 0 {
		t.Errorf("recovery: removed %v, rolled forward %v", r.Removed, r.RolledForward)
	}
	if _, err := st.Stat(ctx, "new.txt"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("cut-short create left behind: %v", err)
	}
	root, _ := ReadRoot(ctx, st)
	audit, _ := Audit(ctx, st, root.State.Catalog, nil)
	if !audit.Truthful() || audit.OK != 1 {
		t.Errorf("catalog not truthful after recovery: %+v", audit)
	}
	if _, ok := root.Listing[journal.Name]; ok {
		t.Errorf("journal left")
	}
}

func hashBytes(s string) (string, int64, error) {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:]), int64(len(s)), nil
}
