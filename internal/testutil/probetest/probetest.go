// Package probetest runs probe's proof on a scratch object, for tests of
// a store that hold no lock object to prove it on.
package probetest

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/probe"
)

// Exclusion proves that st enforces exclusive creates and version-conditioned
// writes (probe.Object) on a uniquely named object in the reserved
// namespace (.distributor.probe-<random>) that it creates and removes again (five
// requests). It returns nil when it does, a *probe.UnenforcedError when the
// server accepted a write it had to refuse, and another error when the
// probe itself could not run (the server is unreachable, permissions).
func Exclusion(ctx context.Context, st storage.Store) (err error) {
	name := ".distributor.probe-" + rand.Text()
	first := []byte("distributor probe: exclusive create " + name + "\n")
	v, err := storage.PutIf(ctx, st, name, first, "")
	if err != nil {
		return fmt.Errorf("probe %s: create %s: %w", st, name, err)
	}
	defer func() {
		if derr := st.Delete(context.WithoutCancel(ctx), name); derr != nil && err == nil {
			err = fmt.Errorf("probe %s: remove %s: %w", st, name, derr)
		}
	}()
	return probe.Object(ctx, st, name, first, v, func(tag string) []byte {
		return []byte("distributor probe: " + tag + "\n")
	}, nil)
}
