package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// This file holds what only tests use.

// Publication is the unit of retention (spec section 7): the outputs one
// owner holds under one source identity (id, digest, created).
type Publication struct {
	Source catalog.Source
	// Outputs are the publication's records, sorted by path.
	Outputs []catalog.Output
}

// SelectPrune is Prune's selection over a slice of outputs (see
// selectPublications): the publications of owner that the policy selects,
// oldest first. outputs is not modified.
func SelectPrune(outputs []catalog.Output, owner catalog.Owner, now time.Time, olderThan time.Duration, keepMin int) []Publication {
	s, _ := selectPublications(func(fn func(*catalog.Output) error) error {
		for i := range outputs {
			fn(&outputs[i])
		}
		return nil
	}, owner, now, olderThan, keepMin)
	selected := make([]Publication, 0, len(s.chosen))
	for _, p := range s.chosen {
		outs := slices.Clone(p.outputs)
		slices.SortFunc(outs, func(a, b catalog.Output) int { return strings.Compare(a.Path, b.Path) })
		selected = append(selected, Publication{Source: p.source, Outputs: outs})
	}
	return selected
}

// AuditResult says how the records of a catalog compare with storage.
type AuditResult struct{ *report.Verify }

// Truthful reports whether every audited record matched storage.
func (r *AuditResult) Truthful() bool { return len(r.Missing) == 0 && len(r.Corrupt) == 0 }

// Audit re-hashes, from storage, every output of c that keep selects (nil
// selects all) and compares sha256 and size with its record, one output
// at a time. Missing and Corrupt are in catalog order; the first read
// error stops the audit and is returned.
func Audit(ctx context.Context, st storage.Store, c *catalog.Catalog, keep func(*catalog.Output) bool) (*AuditResult, error) {
	records := func(fn func(o *catalog.Output, l *storage.Info) error) error {
		for i := range c.Outputs {
			if o := &c.Outputs[i]; keep == nil || keep(o) {
				if err := fn(o, nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	res := &AuditResult{&report.Verify{}}
	if err := auditStream(ctx, st, records, false, 0, nil, res.Verify); err != nil {
		return nil, err
	}
	return res, nil
}

// ReadRoot reads a root's catalog state and lists it.
func ReadRoot(ctx context.Context, st storage.Store) (*RootState, error) {
	r := &RootState{Store: st, Listing: map[string]int64{}, ReadAt: time.Now()}
	// List first: if a writer commits before the catalog is read, its
	// listing entry is older than the version read, so catalogUnchanged
	// sees a change (the safe direction).
	err := st.List(ctx, "", func(info storage.Info) error {
		if info.Dir {
			return nil // maintenance looks at objects only
		}
		r.Listing[info.Path] = info.Size
		if info.Path == catalog.FileName {
			r.CatalogInfo = info
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", st, err)
	}
	if r.State, r.Version, err = txn.ReadCatalog(ctx, st); err != nil {
		return nil, err
	}
	return r, nil
}
