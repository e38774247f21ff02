package report_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/txn"
)

// TestBriefKeepsTheFencingStatement: a write that failed on the network
// after the lock's lease lapsed is briefed with its cause shortened and the
// statement about the lock whole (the operator must read that this run
// lost its lock and left the root to the next holder), within the line's
// length; error_detail keeps everything.
func TestBriefKeepsTheFencingStatement(t *testing.T) {
	long := strings.Repeat("x", 200)
	cause := fmt.Errorf("write d0/f005.txt: gs://bucket/root: put-new d0/f005.txt: %w",
		&url.Error{Op: "Post", URL: "http://127.0.0.1:4443/upload/storage/v1/b/bucket/o?name=" + long, Err: fmt.Errorf("context canceled")})
	fence := fmt.Errorf("%w (last renewal %s ago, lease 2s, margin 2s)", lock.ErrLeaseLapsed, 3*time.Second)
	err := fmt.Errorf("destination d: %w", &txn.FencedError{Cause: cause, Fence: fence,
		Then: "made no further change, not even a rollback: the lock's next holder settles the root from this run's intent journal"})
	brief, detail := report.Errors(err)
	for _, want := range []string{"destination d: write d0/f005.txt", lock.ErrLeaseLapsed.Error(), "not even a rollback",
		"the lock's next holder settles the root", "(-v or --output json: the whole error)"} {
		if !strings.Contains(*brief, want) {
			t.Errorf("brief %q lacks %q", *brief, want)
		}
	}
	if len(*brief) > report.BriefMax || strings.Contains(*brief, long) {
		t.Errorf("brief is %d bytes (or holds the URL): %q", len(*brief), *brief)
	}
	if *detail != err.Error() || !strings.Contains(*detail, "last renewal 3s ago") {
		t.Errorf("detail %q", *detail)
	}
}
