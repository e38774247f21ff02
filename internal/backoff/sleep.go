// Package backoff holds what retrying code shares: the policy that spaces
// retries, and a wait that ends early when its context is done.
package backoff

import (
	"context"
	"time"
)

// Policy spaces retries (storage calls, webhook deliveries): the wait before
// retry k (from 1) is Base doubled k-1 times, capped at Max (at least Base),
// scaled by Jitter's draw when set (full jitter; a draw outside [0, 1) is 0).
type Policy struct {
	Base, Max time.Duration
	Jitter    func() float64
}

// Wait returns the wait before retry k (from 1).
func (p Policy) Wait(k int) time.Duration {
	d := p.Base
	for i := 1; i < k && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, max(p.Max, p.Base))
	if p.Jitter == nil {
		return d
	}
	if f := p.Jitter(); f > 0 && f < 1 {
		return time.Duration(f * float64(d))
	}
	return 0
}

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
