// Package probe proves, before a writer trusts a server, that the server
// enforces the conditional writes the lock, journal and catalog rest on: an
// exclusive create of an existing object and a write conditioned on a wrong
// version must fail (S3 If-None-Match: * and If-Match; SFTP O_EXCL or
// hardlink; local and SFTP compare versions themselves). A server that
// ignores the condition (seen with S3 gateways that drop the headers, and
// SFTP servers that ignore O_EXCL) would let two writers both believe they
// hold the lock and lose catalog records. A writer proves it on the lock
// object it has just created (lock.Lock.ProveExclusion): no scratch object.
package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Capabilities that a probe proves.
const (
	ExclusiveCreate = "exclusive create (S3 If-None-Match: *, SFTP O_EXCL or hardlink@openssh.com, FTP MKD)"
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

// mismatch is a version no object can have (mismatch2 for an object
// whose version is mismatch after all).
const (
	mismatch  storage.Version = "\"00000000000000000000000000000000\""
	mismatch2 storage.Version = "\"11111111111111111111111111111111\""
)

// Tags that Object passes to its mark function, one per refused write.
const (
	TagExclusiveCreate = "second exclusive create"
	TagWrongVersion    = "write with a wrong version"
)

// ReadBack tells whether the object name still holds own, written at
// version v, after the refused writes of Object: unchanged false is a
// refused write that was applied anyway. A caller passes one to Object to
// read back more cheaply than a Get (a listing it needs anyway, whose
// Versions tell); it must answer from what the server holds now.
type ReadBack func(ctx context.Context, name string, own []byte, v storage.Version) (unchanged bool, err error)

// GetReadBack is the ReadBack that compares the bytes of a Get.
func GetReadBack(st storage.Store) ReadBack {
	return func(ctx context.Context, name string, own []byte, _ storage.Version) (bool, error) {
		got, _, err := st.Get(ctx, name)
		if err != nil {
			return false, fmt.Errorf("probe %s: read %s back: %w", st, name, err)
		}
		return bytes.Equal(got, own), nil
	}
}

// Object proves, in three requests, that st enforces exclusive creates and
// version-conditioned writes on the object name the caller created, holding
// own at version v: both writes must fail with storage.ErrPrecondition and
// readBack (nil: a Get) must find own unchanged (a server that answers 412
// and writes anyway is refused too).
//
// mark(tag) gives the bytes each refused write carries: they must differ
// from own. A caller whose object must stay recognisable even on a server
// that applies them (a lock record) makes them its own record with a marker.
//
// It returns an *UnenforcedError when the server accepted a write it had to
// refuse, another error when the proof could not run.
func Object(ctx context.Context, st storage.Store, name string, own []byte, v storage.Version, mark func(tag string) []byte, readBack ReadBack) error {
	unenforced := func(capability, detail string) error {
		return &UnenforcedError{Root: st.String(), Capability: capability, Detail: detail}
	}
	_, err := storage.PutIf(ctx, st, name, mark(TagExclusiveCreate), "")
	switch {
	case err == nil:
		return unenforced(ExclusiveCreate, "a second exclusive create of an existing object succeeded")
	case !errors.Is(err, storage.ErrPrecondition):
		return fmt.Errorf("probe %s: exclusive create over an existing object: want a precondition failure: %w", st, err)
	}
	wrong := mismatch
	if v == mismatch {
		wrong = mismatch2
	}
	_, err = storage.PutIf(ctx, st, name, mark(TagWrongVersion), wrong)
	switch {
	case err == nil:
		return unenforced(CompareAndSwap, "a write conditioned on a version the object does not have succeeded")
	case !errors.Is(err, storage.ErrPrecondition):
		return fmt.Errorf("probe %s: write with a wrong version: want a precondition failure: %w", st, err)
	}
	if readBack == nil {
		readBack = GetReadBack(st)
	}
	unchanged, err := readBack(ctx, name, own, v)
	if err != nil {
		return err
	}
	if !unchanged {
		return unenforced(ExclusiveCreate, "a refused conditional write changed the object anyway")
	}
	return nil
}
