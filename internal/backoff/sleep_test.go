package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("zero wait on a done context: %v", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("elapsed: %v", err)
	}
}

// TestPolicy: the ceiling doubles from Base up to Max; jitter scales it,
// a draw outside [0, 1) waits nothing.
func TestPolicy(t *testing.T) {
	p := Policy{Base: time.Second, Max: 64 * time.Second}
	for k, want := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 7: 64 * time.Second, 100: 64 * time.Second} {
		if got := p.Wait(k); got != want {
			t.Errorf("Wait(%d) = %v, want %v", k, got, want)
		}
	}
	if got := (Policy{Base: time.Minute, Max: time.Second}).Wait(3); got != time.Minute {
		t.Errorf("Max below Base: %v, want Base", got)
	}
	for f, want := range map[float64]time.Duration{0.5: time.Second, 1: 0, -1: 0} {
		p := Policy{Base: time.Second, Max: 2 * time.Second, Jitter: func() float64 { return f }}
		if got := p.Wait(2); got != want {
			t.Errorf("jitter %v: %v, want %v", f, got, want)
		}
	}
}
