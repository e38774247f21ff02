//go:build !linux

package lock

import "time"

// bootClock is Go's monotonic clock where CLOCK_BOOTTIME is not available.
func bootClock() time.Duration { return goClock() }
