package probe_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/probe"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/probetest"
)

// fakeS3 serves gofakes3 in process; strip removes the conditional-write
// headers from every request first, as some S3 gateways do silently.
func fakeS3(t *testing.T, strip ...string) storage.Store {
	t.Helper()
	return s3test.Start(t, s3test.TLS(), s3test.Middleware(s3test.DropHeaders(strip...))).Open(t, "site")
}

// liar ignores the version condition of a conditional Put, as a server that accepts a
// conditional request and ignores the condition does.
type liar struct {
	storage.Store
	ignoreCreate, ignoreMatch bool
}

func (l *liar) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	v := opts.Version
	if opts.Mode == storage.PutIfVersion && ((v == "" && l.ignoreCreate) || (v != "" && l.ignoreMatch)) {
		if _, err := l.Store.Put(ctx, p, r, size, storage.PutOptions{}); err != nil {
			return "", err
		}
		return "whatever", nil
	}
	return l.Store.Put(ctx, p, r, size, opts)
}

func localStore(t *testing.T) storage.Store {
	st, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestExclusion(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) storage.Store
		want string // "" = proved; else the capability found missing
	}{
		{"local", localStore, ""},
		{"s3 gofakes3", func(t *testing.T) storage.Store { return fakeS3(t) }, ""},
		{"s3 dropping If-None-Match", func(t *testing.T) storage.Store { return fakeS3(t, "If-None-Match") }, probe.ExclusiveCreate},
		{"s3 dropping If-Match", func(t *testing.T) storage.Store { return fakeS3(t, "If-Match") }, probe.CompareAndSwap},
		{"store ignoring exclusive create", func(t *testing.T) storage.Store {
			return &liar{Store: localStore(t), ignoreCreate: true}
		}, probe.ExclusiveCreate},
		{"store ignoring versions", func(t *testing.T) storage.Store { return &liar{Store: localStore(t), ignoreMatch: true} }, probe.CompareAndSwap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.open(t)
			err := probetest.Exclusion(context.Background(), st)
			var ue *probe.UnenforcedError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("probe of a server that enforces conditions: %v", err)
			case tc.want != "" && !errors.As(err, &ue):
				t.Fatalf("probe: %v, want an UnenforcedError", err)
			case tc.want != "" && ue.Capability != tc.want:
				t.Fatalf("missing %q, want %q", ue.Capability, tc.want)
			}
			if tc.want != "" && !strings.Contains(err.Error(), "single_writer") {
				t.Errorf("the error does not say how to opt in: %v", err)
			}
			// The probe cleans up after itself either way.
			if snap := storagetest.Snapshot(t, st); len(snap) != 0 {
				t.Errorf("left behind: %v", snap)
			}
		})
	}
}

// TestExclusionVersitygw runs the probe against the real S3 server the test
// setup starts.
func TestExclusionVersitygw(t *testing.T) {
	st := s3test.Versitygw(t).Open(t, "probe-test")
	if err := probetest.Exclusion(context.Background(), st); err != nil {
		t.Fatalf("versitygw: %v", err)
	}
}
