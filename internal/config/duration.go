package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationUnits are ParseDuration's units, largest first; unitSizes their sizes.
const durationUnits = "dhms"

var unitSizes = [...]time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second}

// ParseDuration parses a retention duration: pairs of a decimal number and a
// unit d (24h), h, m or s, largest first, each at most once ("30d", "1d12h",
// "90m"); no sign, fraction or space. Zero ("0d") is accepted: callers that
// need a positive duration check that.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("invalid duration %q: empty (write e.g. 30d, 1d12h or 90m)", s)
	}
	var total time.Duration
	next := 0 // index in durationUnits of the largest unit still allowed
	i := 0
	for i < len(s) {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return 0, fmt.Errorf("invalid duration %q: expected a number at %q (write e.g. 30d, 1d12h or 90m)", s, s[start:])
		}
		digits := s[start:i]
		if i == len(s) {
			return 0, fmt.Errorf("invalid duration %q: missing unit after %s (use s, m, h or d)", s, digits)
		}
		u := s[i]
		i++
		idx := strings.IndexByte(durationUnits, u)
		if idx < 0 {
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use s, m, h or d)", s, string(u))
		}
		if idx < next {
			return 0, fmt.Errorf("invalid duration %q: units must go from largest to smallest (d, h, m, s), each at most once", s)
		}
		next = idx + 1
		size := unitSizes[idx]
		n, err := strconv.ParseInt(digits, 10, 64) // digits only: fails only out of range
		if err != nil || n > int64(math.MaxInt64/size) || total > math.MaxInt64-time.Duration(n)*size {
			return 0, fmt.Errorf("invalid duration %q: too large", s)
		}
		total += time.Duration(n) * size
	}
	return total, nil
}
