package txn

import (
	"errors"
	"fmt"

	"github.com/distributor-dev/distributor/internal/lock"
)

// FencedError is the failure of a transaction that, after Cause, can no
// longer prove it holds the root's lock (Fence matches lock.ErrLost or
// lock.ErrLeaseLapsed), so it stopped changing the root; Then says what
// it did and left (spec section 6).
type FencedError struct {
	Cause, Fence error
	Then         string
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("%v; this process can no longer prove it holds the root's lock (%v), so it %s", e.Cause, e.Fence, e.Then)
}

// Unwrap returns Cause and Fence.
func (e *FencedError) Unwrap() []error { return []error{e.Cause, e.Fence} }

// Split returns Cause and the statement about the lock with the fence's
// error in brief, for a short report line that shortens the cause but
// keeps the statement whole (report.Brief).
func (e *FencedError) Split() (cause error, note string) {
	switch {
	case errors.Is(e.Fence, lock.ErrLost):
		note = lock.ErrLost.Error() + ", so this process "
	case errors.Is(e.Fence, lock.ErrLeaseLapsed):
		note = lock.ErrLeaseLapsed.Error() + ", so it "
	default:
		note = fmt.Sprintf("this process can no longer prove it holds the root's lock (%v), so it ", e.Fence)
	}
	return e.Cause, note + e.Then
}
