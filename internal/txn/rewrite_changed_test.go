package txn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage"
)

// TestCatalogRewriteRefusesByteChangedSincePlanRead: the local rewrite
// proves the catalog it splices is the one the plan read (StreamCatalog):
// a catalog changed in place
// after that read, same size, one byte of a record's digest different (still
// a valid catalog the splice could edit), is refused and left as it is.
// The bytes the plan read, put back, are rewritten.
func TestCatalogRewriteRefusesByteChangedSincePlanRead(t *testing.T) {
	c, e := baseCatalog(50)
	dir, st := newRoot(t)
	doc := mustEncode(t, c)
	if _, err := storage.PutIf(context.Background(), st, catalog.FileName, doc, ""); err != nil {
		t.Fatal(err)
	}
	v, err := StreamCatalog(context.Background(), st, func(r io.Reader) error {
		_, _, _, err := catalog.ScanCanonical(r, func(*catalog.Output) error { return nil })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.LastIndex(doc, []byte(`"sha256": "sha256:`)) + len(`"sha256": "sha256:`)
	changed := bytes.Clone(doc)
	if changed[at] = '0'; doc[at] == '0' { // another hex digit
		changed[at] = '1'
	}
	file := filepath.Join(dir, catalog.FileName)
	if err := os.WriteFile(file, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Parse(changed); err != nil {
		t.Fatalf("the changed catalog is not valid: %v", err)
	}
	tx := begin(t, st, nil)
	if _, err := tx.Apply(&Change{Base: v, BaseCanonical: true, Final: e}); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("apply over a catalog changed since the plan read it: %v, want ErrPrecondition", err)
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, changed) {
		t.Fatal("the changed catalog was rewritten")
	}
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := tx.Apply(&Change{Base: v, BaseCanonical: true, Final: e}); err != nil || !res.Committed {
		t.Fatalf("apply over the catalog the plan read: %v %+v", err, res)
	}
}
