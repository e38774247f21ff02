//go:build !unix

package compress

import "time"

// start is when the test binary started: without getrusage, cpuTime is
// the wall clock since then.
var start = time.Now()

// cpuTime is the wall clock since the tests started (no getrusage here).
func cpuTime() time.Duration { return time.Since(start) }
