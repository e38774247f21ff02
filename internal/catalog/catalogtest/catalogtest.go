// Package catalogtest helps the tests of packages that edit catalogs.
package catalogtest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// Apply returns e applied to c (nil: none), in memory, refusing what
// catalog.Edit refuses (a path put twice, or both put and deleted): the
// catalog a streamed edit writes.
func Apply(c *catalog.Catalog, e *catalog.Edit) (*catalog.Catalog, error) {
	put := map[string]bool{}
	for _, o := range e.Put {
		switch {
		case put[o.Path]:
			return nil, fmt.Errorf("catalog edit: %q put twice", o.Path)
		case slices.Contains(e.Delete, o.Path):
			return nil, fmt.Errorf("catalog edit: %q both put and deleted", o.Path)
		}
		put[o.Path] = true
	}
	h := e.Header
	n := &catalog.Catalog{SchemaVersion: catalog.SchemaVersion, DistributorVersion: h.DistributorVersion,
		CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt}
	if c != nil && !e.Fresh {
		for _, o := range c.Outputs {
			if !put[o.Path] && !slices.Contains(e.Delete, o.Path) {
				n.Outputs = append(n.Outputs, o)
			}
		}
	}
	n.Outputs = append(n.Outputs, e.Put...)
	slices.SortStableFunc(n.Outputs, func(a, b catalog.Output) int { return strings.Compare(a.Path, b.Path) })
	return n, nil
}
