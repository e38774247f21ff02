// Package backoff holds what retrying code shares: a wait that ends early
// when its context is done.
package backoff

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx is done, whichever comes first, and
// returns ctx's error in the second case (also for d <= 0 on a done ctx).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
