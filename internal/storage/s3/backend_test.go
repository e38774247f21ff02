package s3

import (
	"encoding/json"
	"math/rand/v2"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/blocktest"
)

// TestBlockSchema: schema.json says what the Block struct says.
func TestBlockSchema(t *testing.T) {
	blocktest.CheckSchema(t, Block{}, Backend().Schema, "s3.go")
}

// TestBlockChecksMatchTheSchema: decoding accepts exactly the bucket and
// region names that the patterns of the block's schema accept (bucket
// names also refuse ".." and IP addresses, which a pattern cannot say; an
// empty region is no region), on edge cases and on random strings over a
// mixed alphabet.
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
	for range 2000 {
		var b strings.Builder
		for range r.IntN(70) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	bucketRE := regexp.MustCompile(frag.Properties["bucket"].Pattern)
	regionRE := regexp.MustCompile(frag.Properties["region"].Pattern)
	for _, s := range inputs {
		for field, want := range map[string]bool{
			"bucket": bucketRE.MatchString(s) && !strings.Contains(s, "..") && net.ParseIP(s) == nil,
			"region": s == "" || regionRE.MatchString(s),
		} {
			b := &blocktest.Map{Values: map[string]any{"bucket": "abc", field: s}}
			o := decode(b).(*Options)
			got := map[string]string{"bucket": o.Bucket, "region": o.Region}[field]
			if ok := len(b.Problems) == 0; ok != want || ok && got != s {
				t.Errorf("%s %q: decoding accepts it %v (%q, problems %q), the schema's pattern %v", field, s, ok, got, b.Problems, want)
			}
		}
	}
}
