package config

import "strings"

// Closest returns the candidate nearest to name by edit distance (with
// transpositions, ignoring case) within a plausible typo, else the only
// candidate that a name of 4 characters or more begins, else "".
func Closest(name string, candidates []string) string {
	best, bestDist, prefixed, prefixes := "", 0, "", 0
	for _, c := range candidates {
		if len(name) >= 4 && len(c) > len(name) && strings.EqualFold(c[:len(name)], name) {
			prefixed, prefixes = c, prefixes+1
		}
		if diff := len(name) - len(c); diff > 2 || diff < -2 {
			continue // the distance is at least the length difference
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d <= min(2, len(c)/2) && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	if best == "" && prefixes == 1 {
		return prefixed
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and adjacent transpositions each cost 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Inputs are field names and ids; guard against pathological lengths.
	if len(ra) > 128 || len(rb) > 128 {
		if a == b {
			return 0
		}
		return max(len(ra), len(rb))
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
