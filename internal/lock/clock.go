package lock

import "time"

// processStart anchors goClock, set once at start-up.
var processStart = time.Now()

// goClock is Go's monotonic clock as a duration since the process started.
func goClock() time.Duration { return time.Since(processStart) }

// MonoClock reads a monotonic clock: only differences between two readings
// mean anything. Fencing and stale-lock decisions use it, never the wall
// clock, so neither a wrong nor a stepped system clock can fool them.
type MonoClock func() time.Duration

// SystemClock is the default MonoClock: CLOCK_BOOTTIME on Linux (it counts
// time spent suspended), Go's monotonic clock elsewhere.
func SystemClock() time.Duration { return bootClock() }
