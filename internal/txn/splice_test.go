package txn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/catalog/catalogtest"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
)

// baseCatalog is a catalog of n records, and the Edit a run adding one
// file (new.txt) makes to it.
func baseCatalog(n int) (*catalog.Catalog, *catalog.Edit) {
	c := &catalog.Catalog{SchemaVersion: catalog.SchemaVersion, CreatedAt: now, UpdatedAt: now}
	for i := range n {
		c.Outputs = append(c.Outputs, record(fmt.Sprintf("d/%03d.txt", i), fmt.Sprint(i)))
	}
	e := &catalog.Edit{Header: catalog.Header{CreatedAt: now, UpdatedAt: now.Add(1)},
		Put: []catalog.Output{record("new.txt", "new")}, Delete: []string{"d/001.txt"}}
	return c, e
}

// TestCatalogEditPaths: the catalog a run leaves is the same, byte for byte,
// whichever way the edit reaches it: spliced or decoded, through a store
// that rewrites in one pass or through a read and a conditional write, from
// the root or from the planner's copy, and over a base in another layout
// that the planner wrongly called canonical (the splice notices and the
// edit is decoded instead).
func TestCatalogEditPaths(t *testing.T) {
	c, e := baseCatalog(20)
	canonical := mustEncode(t, c)
	var v any
	if err := json.Unmarshal(canonical, &v); err != nil {
		t.Fatal(err)
	}
	compact, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	next, err := catalogtest.Apply(c, e)
	if err != nil {
		t.Fatal(err)
	}
	want := mustEncode(t, next)
	for _, base := range []struct {
		name string
		doc  []byte
	}{{"canonical", canonical}, {"compact", compact}} {
		for _, flagged := range []bool{true, false} {
			for _, via := range []string{"rewriter", "stream", "copy"} {
				t.Run(fmt.Sprintf("%s/flagged=%v/%s", base.name, flagged, via), func(t *testing.T) {
					dir, st := newRoot(t)
					v, err := storage.PutIf(context.Background(), st, catalog.FileName, base.doc, "")
					if err != nil {
						t.Fatal(err)
					}
					var store storage.Store = st
					ch := &Change{Base: v, BaseCanonical: flagged, Final: e}
					switch via {
					case "rewriter":
						if !store.Properties().Rewrite {
							t.Fatal("the local store does not rewrite")
						}
					case "stream":
						store = &hooked{Store: st} // hides RewriteIf
					case "copy":
						store = &hooked{Store: st}
						ch.BaseCopy = NewSpool()
						ch.BaseCopy.Write(base.doc)
						defer ch.BaseCopy.Close()
					}
					tx := begin(t, store, nil)
					if res, err := tx.Apply(ch); err != nil || !res.Committed {
						t.Fatalf("apply: %v %+v", err, res)
					}
					got, err := os.ReadFile(filepath.Join(dir, catalog.FileName))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("catalog differs:\n%s\nwant\n%s", got, want)
					}
				})
			}
		}
	}
}

// TestCatalogEditRefusesChangedBase: a catalog replaced after the plan read
// it (by a writer that took the lock over) is not overwritten, on either
// write path, even when the splice could apply the edit to the new bytes.
func TestCatalogEditRefusesChangedBase(t *testing.T) {
	c, e := baseCatalog(5)
	for _, via := range []string{"rewriter", "stream"} {
		t.Run(via, func(t *testing.T) {
			dir, st := newRoot(t)
			v, err := storage.PutIf(context.Background(), st, catalog.FileName, mustEncode(t, c), "")
			if err != nil {
				t.Fatal(err)
			}
			c2 := c.Clone()
			c2.Outputs = append(c2.Outputs, record("successor.txt", "s"))
			theirs := mustEncode(t, c2)
			if _, err := storage.PutIf(context.Background(), st, catalog.FileName, theirs, v); err != nil {
				t.Fatal(err)
			}
			var store storage.Store = st
			if via == "stream" {
				store = &hooked{Store: st}
			}
			tx := begin(t, store, nil)
			_, err = tx.Apply(&Change{Base: v, BaseCanonical: true, Final: e})
			if !errors.Is(err, storage.ErrPrecondition) {
				t.Fatalf("apply over a changed catalog: %v, want ErrPrecondition", err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, catalog.FileName)); !bytes.Equal(got, theirs) {
				t.Fatalf("the successor's catalog was changed:\n%s", got)
			}
		})
	}
}

// TestCatalogEditFencedChangesNothing: a writer paused past its lease before
// its catalog write (here with nothing else to do, so the catalog write's
// own fence is the only check) leaves the catalog and the root as they
// were, on either write path: no new catalog, no temporary file.
func TestCatalogEditFencedChangesNothing(t *testing.T) {
	c, e := baseCatalog(5)
	for _, via := range []string{"rewriter", "stream"} {
		t.Run(via, func(t *testing.T) {
			dir, st := newRoot(t)
			old := mustEncode(t, c)
			v, err := storage.PutIf(context.Background(), st, catalog.FileName, old, "")
			if err != nil {
				t.Fatal(err)
			}
			var store storage.Store = st
			if via == "stream" {
				store = &hooked{Store: st}
			}
			clock := &fakeClock{}
			tx := begin(t, store, clock)
			clock.Add(2 * time.Hour) // paused past the lease
			_, err = tx.Apply(&Change{Base: v, BaseCanonical: true, Final: e})
			if !errors.Is(err, lock.ErrLeaseLapsed) {
				t.Fatalf("apply after the lease lapsed: %v, want lock.ErrLeaseLapsed", err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, catalog.FileName)); !bytes.Equal(got, old) {
				t.Fatalf("a fenced writer changed the catalog:\n%s", got)
			}
			if temps, err := st.SweepTemp(context.Background(), storage.SweepOptions{DryRun: true}); err != nil || len(temps) != 0 {
				t.Errorf("temporary files after the fenced write: %v %v", temps, err)
			}
		})
	}
}
