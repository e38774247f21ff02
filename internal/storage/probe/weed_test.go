package probe_test

import (
	"context"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/testutil/probetest"
)

// TestExclusionSeaweedFS runs the probe against the SeaweedFS S3 gateway
// the test setup starts: it must enforce If-None-Match: * and If-Match.
func TestExclusionSeaweedFS(t *testing.T) {
	st := s3test.Weed(t).Open(t, "probe-test")
	if err := probetest.Exclusion(context.Background(), st); err != nil {
		t.Fatalf("SeaweedFS: %v", err)
	}
}
