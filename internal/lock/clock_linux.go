//go:build linux

package lock

import (
	"time"

	"golang.org/x/sys/unix"
)

// bootClock reads CLOCK_BOOTTIME: a monotonic clock that, unlike Go's
// (CLOCK_MONOTONIC), keeps counting while the machine is suspended, so a
// holder whose laptop slept through its lease knows it when it wakes.
func bootClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return goClock()
	}
	return time.Duration(ts.Nano())
}
