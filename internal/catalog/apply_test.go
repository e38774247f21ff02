package catalog

import (
	"slices"
	"sort"
	"strings"
)

// Apply returns e applied to c (nil: none), in memory: the reference the
// streamed edit (ApplyTo, spliced or not) is checked against.
func (c *Catalog) Apply(e *Edit) (*Catalog, error) {
	put, del, err := e.sorted()
	if err != nil {
		return nil, err
	}
	n := &Catalog{SchemaVersion: SchemaVersion, DistributorVersion: e.Header.DistributorVersion,
		CreatedAt: e.Header.CreatedAt, UpdatedAt: e.Header.UpdatedAt}
	if c != nil && !e.Fresh {
		for _, o := range c.Outputs {
			_, isPut := slices.BinarySearchFunc(put, o.Path, func(p Output, path string) int { return strings.Compare(p.Path, path) })
			if _, isDel := slices.BinarySearch(del, o.Path); !isPut && !isDel {
				n.Outputs = append(n.Outputs, o)
			}
		}
	}
	n.Outputs = append(n.Outputs, put...)
	sort.Slice(n.Outputs, func(i, j int) bool { return n.Outputs[i].Path < n.Outputs[j].Path })
	return n, nil
}
