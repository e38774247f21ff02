package notify

import (
	"fmt"
	"testing"
)

// TestPayloadURLs: each URL list is bounded to MaxURLs with the totals
// kept; Truncated says when a list is cut or outputs without a URL were
// counted; both lists are always present.
func TestPayloadURLs(t *testing.T) {
	var many []string
	for i := range 150 {
		many = append(many, fmt.Sprintf("https://r.example.com/%03d.html", i))
	}
	// changed is what urlsOf takes.
	type changed struct {
		Written, Deleted           []string
		WrittenTotal, DeletedTotal int
	}
	for _, tc := range []struct {
		name      string
		ev        changed
		written   int
		deleted   int
		truncated bool
	}{
		{"none", changed{}, 0, 0, false},
		{"few", changed{Written: many[:3], WrittenTotal: 3, Deleted: many[3:4], DeletedTotal: 1}, 3, 1, false},
		{"cut", changed{Written: many, WrittenTotal: 150, Deleted: many[:100], DeletedTotal: 100}, 100, 100, true},
		{"no base_url", changed{WrittenTotal: 4}, 0, 0, true},
	} {
		p := urlsOf(tc.ev.Written, tc.ev.Deleted, tc.ev.WrittenTotal, tc.ev.DeletedTotal)
		if p.Written == nil || p.Deleted == nil || len(p.Written) != tc.written || len(p.Deleted) != tc.deleted ||
			p.WrittenTotal != tc.ev.WrittenTotal || p.DeletedTotal != tc.ev.DeletedTotal || p.Truncated != tc.truncated {
			t.Errorf("%s: %d written, %d deleted, totals %d %d, truncated %v", tc.name, len(p.Written), len(p.Deleted), p.WrittenTotal, p.DeletedTotal, p.Truncated)
		}
		if tc.written > 0 && p.Written[0] != many[0] {
			t.Errorf("%s: first written %q", tc.name, p.Written[0])
		}
	}
}
