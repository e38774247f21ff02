package s3

import (
	"encoding/json"
	"math/rand/v2"
	"net"
	"regexp"
	"strings"
	"testing"
)

// TestBlockChecksMatchTheSchema: the hand-written bucket and region checks
// accept exactly what the patterns of the block's schema accept (bucket
// names also refuse ".." and IP addresses, which a pattern cannot say), on
// edge cases and on random strings over a mixed alphabet.
func TestBlockChecksMatchTheSchema(t *testing.T) {
	var frag struct {
		Properties map[string]struct {
			Pattern string `json:"pattern"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(Backend().Schema), &frag); err != nil {
		t.Fatal(err)
	}
	inputs := []string{"", "a", "A", "_", "-", ".", "0", "a-", "-a", "a.b", "a_b", "A_b", "ab", "abc",
		"a..b", "é", "aé", "a\n", "\na", "a b", strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("a", 65), strings.Repeat("a", 66), "my-bucket", "my-bucket-", "us-east-1", "HOME", "_X1",
		"10.0.0.1", "my.bucket", "my-.bucket"}
	alphabet := []rune("aZ09._- é\n/A")
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(70) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	for _, c := range []struct {
		field string
		check func(string) bool
		extra func(string) bool
	}{
		{"bucket", validBucket, func(s string) bool { return !strings.Contains(s, "..") && net.ParseIP(s) == nil }},
		{"region", validRegion, func(string) bool { return true }},
	} {
		re := regexp.MustCompile(frag.Properties[c.field].Pattern)
		for _, s := range inputs {
			if got, want := c.check(s), re.MatchString(s) && c.extra(s); got != want {
				t.Errorf("%s %q: the check says %v, the schema's pattern %v", c.field, s, got, want)
			}
		}
	}
}
