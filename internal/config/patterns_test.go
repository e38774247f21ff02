package config

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestCharPatternsMatchTheirRegexps: each hand-written value check accepts
// exactly what its regular expression (the one schema.json publishes)
// accepts, on edge cases and on random strings over a mixed alphabet.
func TestCharPatternsMatchTheirRegexps(t *testing.T) {
	inputs := []string{"", "a", "A", "_", "-", ".", "0", "a-", "-a", "a.b", "a_b", "A_b", "ab", "abc",
		"a..b", "é", "aé", "a\n", "\na", "a b", strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("a", 65), strings.Repeat("a", 66), "my-bucket", "my-bucket-", "us-east-1", "HOME", "_X1"}
	alphabet := []rune("aZ09._- é\n/A")
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := r.IntN(70)
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	for _, p := range []charPattern{slugRE, envNameRE} {
		re := regexp.MustCompile(p.String())
		for _, s := range inputs {
			if got, want := p.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%s: MatchString(%q) = %v, the regexp says %v", p, s, got, want)
			}
		}
	}
}
