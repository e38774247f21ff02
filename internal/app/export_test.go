package app

import (
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// SelectPrune is Prune's selection over a slice of outputs (see
// selectPublications), for tests: the publications of owner that the
// policy selects, oldest first. outputs is not modified.
func SelectPrune(outputs []catalog.Output, owner catalog.Owner, now time.Time, olderThan time.Duration, keepMin int) []Publication {
	s, _ := selectPublications(func(fn func(*catalog.Output) error) error {
		for i := range outputs {
			fn(&outputs[i])
		}
		return nil
	}, owner, now, olderThan, keepMin)
	return s.publications()
}
