package storage

import (
	"errors"
	"fmt"
)

// CheckVersion is the compare step of a compare-and-swap: it returns nil
// if cur, the Version of the current object ("" if there is none), is
// want, and otherwise an error matching ErrPrecondition that says what was
// found.
func CheckVersion(cur, want Version) error {
	switch {
	case cur == want:
		return nil
	case cur == "":
		return fmt.Errorf("%w: object is absent, want version %s", ErrPrecondition, want)
	default:
		return fmt.Errorf("%w: version is %s, want %s", ErrPrecondition, cur, want)
	}
}

// CreateAttempts bounds how many temporary files an exclusive create (PutIfVersion
// with the zero Version, by a Store that writes a temporary file and links
// it into place) writes when a sweep keeps removing them before they are
// linked.
const CreateAttempts = 5

// ErrTempVanished reports that the temporary file of an exclusive create
// was gone when it was to be linked into place: the destination lock's
// holder swept it (see Store.SweepTemp), or pruned its directory. It does
// not match ErrNotExist: the object was not missing, the temporary file
// was.
var ErrTempVanished = errors.New("the temporary file was removed before it was linked into place (swept by the destination lock's holder?)")

// RetryVanished calls create, one attempt at an exclusive create through a
// temporary file, until it returns anything but an error matching
// ErrTempVanished, at most CreateAttempts times: each attempt writes a new
// temporary file.
func RetryVanished(create func() error) error {
	for attempt := 1; ; attempt++ {
		err := create()
		if !errors.Is(err, ErrTempVanished) {
			return err
		}
		if attempt == CreateAttempts {
			return fmt.Errorf("%d attempts: %w", attempt, err)
		}
	}
}
