// Package testtime holds the test suite's one time factor. Every timing
// budget a test sets (an adapter's short deadline, a lease, the bound on how
// long a call may block) is written for an idle machine and multiplied by
// Factor, so that the suite keeps its verdicts when the machine is busy: a
// budget grows, the ratio between a deadline and the bound that checks it
// stays the same.
package testtime

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Env names the variable that sets the factor: a number of at least 1.
const Env = "DISTRIBUTOR_TEST_TIME_FACTOR"

// maxAuto caps the factor derived from the load, so that a runaway load
// does not stretch a hang into minutes.
const maxAuto = 4

// factor is computed once per test process.
var factor = sync.OnceValues(func() (float64, error) { return compute(os.Getenv(Env), loadPerCore()) })

// Factor is the test-wide time factor: $DISTRIBUTOR_TEST_TIME_FACTOR when
// it is set, else 1 plus the machine's load per core when the test
// process started (the 1-minute load average over the number of CPUs),
// at most 4. An invalid variable panics: a test run with a typo in its
// factor must not pass on the default.
func Factor() float64 {
	f, err := factor()
	if err != nil {
		panic(err)
	}
	return f
}

// Scale returns d multiplied by Factor.
func Scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Factor())
}

// compute is Factor for the variable's value env and the load per core.
func compute(env string, load float64) (float64, error) {
	if env != "" {
		f, err := strconv.ParseFloat(env, 64)
		if err != nil || f < 1 {
			return 0, fmt.Errorf("%s=%q: want a number of at least 1", Env, env)
		}
		return f, nil
	}
	return min(1+load, maxAuto), nil
}

// loadPerCore is the 1-minute load average per CPU, 0 where it cannot be
// read (outside Linux).
func loadPerCore() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0
	}
	l, err := strconv.ParseFloat(fields[0], 64)
	if err != nil || l < 0 {
		return 0
	}
	return l / float64(runtime.NumCPU())
}
