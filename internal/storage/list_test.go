package storage_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

func TestListResult(t *testing.T) {
	stop := errors.New("stop")
	wrap := func(err error) error { return fmt.Errorf("store x: list: %w", err) }
	if err := storage.ListResult(nil, wrap); err != nil {
		t.Errorf("nil: %v", err)
	}
	// The callback's error comes back unchanged, even wrapped by the walk.
	walk := fmt.Errorf("at a/b: %w", &storage.CallbackError{Err: stop})
	if err := storage.ListResult(walk, wrap); err != stop {
		t.Errorf("callback error: got %v, want it unchanged", err)
	}
	other := errors.New("permission denied")
	if err := storage.ListResult(other, wrap); err == nil || err.Error() != "store x: list: permission denied" || !errors.Is(err, other) {
		t.Errorf("walk error: %v", err)
	}
}
