package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// Corrupt is a managed output whose stored bytes differ from its record.
type Corrupt struct {
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// AuditResult says how the records of a catalog compare with storage.
type AuditResult struct {
	OK      int
	Missing []catalog.Output
	Corrupt []Corrupt
}

// Truthful reports whether every audited record matched storage.
func (r *AuditResult) Truthful() bool { return len(r.Missing) == 0 && len(r.Corrupt) == 0 }

// Audit re-hashes, from storage, every output of c that keep selects (nil
// selects all) and compares sha256 and size with its record.
func Audit(ctx context.Context, st storage.Store, c *catalog.Catalog, keep func(*catalog.Output) bool) (*AuditResult, error) {
	res := &AuditResult{}
	for i := range c.Outputs {
		o := &c.Outputs[i]
		if keep != nil && !keep(o) {
			continue
		}
		sum, size, err := txn.HashObject(ctx, st, o.Path)
		switch {
		case errors.Is(err, storage.ErrNotExist):
			res.Missing = append(res.Missing, *o)
		case err != nil:
			return nil, err
		case sum != o.SHA256 || size != o.Size:
			res.Corrupt = append(res.Corrupt, Corrupt{Path: o.Path,
				Expected: fmt.Sprintf("%s (%d bytes)", o.SHA256, o.Size), Actual: fmt.Sprintf("%s (%d bytes)", sum, size)})
		default:
			res.OK++
		}
	}
	return res, nil
}
