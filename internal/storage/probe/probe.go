// Package probe proves, before a writer trusts a server, that the server
// enforces the conditional writes distributor's lock, journal and catalog
// compare-and-swap rest on: an exclusive create must fail when the object
// exists (S3 If-None-Match: *, SFTP O_EXCL or hardlink, local link/O_EXCL),
// and a write conditioned on a version that does not match must fail (S3
// If-Match; local and SFTP compare the version themselves). A server that
// accepts such a request and ignores the condition (seen with S3 gateways
// that drop the headers, and SFTP servers that ignore O_EXCL) would let two
// writers both believe they hold the lock and lose catalog records.
//
// The probe works through the storage.Store interface only, on a uniquely
// named object in the reserved namespace (.distributor.probe-<random>) that
// it removes again: four or five small requests.
package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/distributor-dev/distributor/internal/storage"
)

// NamePrefix starts the name of every probe object at a root.
const NamePrefix = ".distributor.probe-"

// Capabilities that a probe proves.
const (
	ExclusiveCreate = "exclusive create (S3 If-None-Match: *, SFTP O_EXCL or hardlink@openssh.com)"
	CompareAndSwap  = "compare-and-swap (S3 If-Match)"
)

// UnenforcedError reports a server that accepted a conditional write that
// must have failed: it does not enforce Capability.
type UnenforcedError struct {
	Root       string
	Capability string
	Detail     string
}

func (e *UnenforcedError) Error() string {
	return fmt.Sprintf("%s does not enforce %s: %s; distributor's lock and catalog compare-and-swap rely on it, "+
		"so concurrent writers could lose records (see docs/backends.md, \"Servers that ignore conditional writes\"; "+
		"if you guarantee a single writer yourself, set single_writer: true on the destination)", e.Root, e.Capability, e.Detail)
}

// mismatch is a version no object can have.
const mismatch storage.Version = "\"00000000000000000000000000000000\""

// Exclusion proves that st enforces exclusive creates and version-conditioned
// writes. It returns nil when it does, an *UnenforcedError when the server
// accepted a write it had to refuse, and another error when the probe itself
// could not run (the server is unreachable, permissions).
func Exclusion(ctx context.Context, st storage.Store) (err error) {
	name := NamePrefix + rand.Text()
	first := []byte("distributor probe: exclusive create " + name + "\n")
	if _, err := st.PutIf(ctx, name, first, ""); err != nil {
		return fmt.Errorf("probe %s: create %s: %w", st, name, err)
	}
	defer func() {
		if derr := st.Delete(context.WithoutCancel(ctx), name); derr != nil && err == nil {
			err = fmt.Errorf("probe %s: remove %s: %w", st, name, derr)
		}
	}()
	unenforced := func(capability, detail string) error {
		return &UnenforcedError{Root: st.String(), Capability: capability, Detail: detail}
	}
	_, err = st.PutIf(ctx, name, []byte("distributor probe: second exclusive create\n"), "")
	switch {
	case err == nil:
		return unenforced(ExclusiveCreate, "a second exclusive create of an existing object succeeded")
	case !errors.Is(err, storage.ErrPrecondition):
		return fmt.Errorf("probe %s: exclusive create over an existing object: want a precondition failure: %w", st, err)
	}
	_, err = st.PutIf(ctx, name, []byte("distributor probe: write with a wrong version\n"), mismatch)
	switch {
	case err == nil:
		return unenforced(CompareAndSwap, "a write conditioned on a version the object does not have succeeded")
	case !errors.Is(err, storage.ErrPrecondition):
		return fmt.Errorf("probe %s: write with a wrong version: want a precondition failure: %w", st, err)
	}
	got, _, err := st.Get(ctx, name)
	if err != nil {
		return fmt.Errorf("probe %s: read %s back: %w", st, name, err)
	}
	if !bytes.Equal(got, first) {
		return unenforced(ExclusiveCreate, "a refused conditional write changed the object anyway")
	}
	return nil
}
