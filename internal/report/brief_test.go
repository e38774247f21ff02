package report

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
)

// refused is what dialing a closed port returns, as net/http wraps it.
func refused(method, rawURL string) error {
	return &url.Error{Op: method, URL: rawURL, Err: &net.OpError{Op: "dial", Net: "tcp",
		Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9000},
		Err:  os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
}

func TestBrief(t *testing.T) {
	get := refused("Get", "http://127.0.0.1:9000/reports/weather/.distributor.json")
	put := refused("Put", "http://127.0.0.1:9000/reports/weather/report.html")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"not a network failure: unchanged", fmt.Errorf("write a: %w", errors.New(strings.Repeat("long cause ", 40))), "write a: " + strings.Repeat("long cause ", 40)},
		{"the store and the URL repeat the outer layers",
			fmt.Errorf("read .distributor.json at s3://reports/weather: %w",
				fmt.Errorf("%w (gave up after 4 attempts)", fmt.Errorf("s3://reports/weather: read .distributor.json: %w", get))),
			"read .distributor.json at s3://reports/weather: dial tcp 127.0.0.1:9000: connect: connection refused (gave up after 4 attempts); check that 127.0.0.1:9000 is up and reachable from here, then rerun (-v or --output json: the whole error)"},
		{"every earlier attempt and a cleanup's account are dropped, its next step kept",
			fmt.Errorf("%w; rolled back 0 created file(s), recorded 0 completed change(s), left 1 in place (img/a.svg: its bytes are not the ones this run wrote: left alone); the root keeps its intent journal (temporary files: s3://reports/weather: abort incomplete uploads: NoSuchKey (HTTP 404)): the next run, prune --apply or reconcile-state on it recovers it",
				fmt.Errorf("write report.html: %w", fmt.Errorf("%w (attempt 2; attempt 1 failed with: %v)", fmt.Errorf("s3://reports/weather: put-new report.html: %w", put), put))),
			"write report.html: s3://reports/weather: put-new report.html: dial tcp 127.0.0.1:9000: connect: connection refused; the root keeps its intent journal: the next run, prune --apply or reconcile-state on it recovers it (-v or --output json: the whole error)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Brief(tt.err)
			if got != tt.want {
				t.Errorf("Brief:\n got  %s\n want %s", got, tt.want)
			}
			if tt.err.Error() != tt.want && len(got) > BriefMax {
				t.Errorf("%d bytes, more than %d", len(got), BriefMax)
			}
		})
	}
}

// However long the chain, the brief message stays within BriefMax and keeps
// what failed (the start), the server and the next step (the end).
func TestBriefCutsTheMiddle(t *testing.T) {
	var err error = refused("Get", "http://127.0.0.1:9000/x")
	for i := range 30 {
		err = fmt.Errorf("layer%02d: %w", i, err)
	}
	got := Brief(err)
	if len(got) > BriefMax || !strings.HasPrefix(got, "layer29: ") || !strings.Contains(got, " ... ") ||
		!strings.HasSuffix(got, "; check that 127.0.0.1:9000 is up and reachable from here, then rerun (-v or --output json: the whole error)") {
		t.Errorf("%d bytes: %s", len(got), got)
	}
}

// A cut through an aside takes all of it: the SSH handshake that timed
// out left "... i/o timeout); check that" with its "(" cut away.
func TestBriefCutsNoAsideInTwo(t *testing.T) {
	op := &net.OpError{Op: "read", Net: "tcp", Source: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 45802},
		Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 39123}, Err: os.ErrDeadlineExceeded}
	err := fmt.Errorf("sftp://root@127.0.0.1:39123/tmp/www: connect: %w",
		fmt.Errorf("SSH handshake with 127.0.0.1:39123: no answer within 30s (dial timeout): %w (%w)", context.DeadlineExceeded,
			fmt.Errorf("ssh: handshake failed: %w", op)))
	got := Brief(err)
	if want := "sftp://root@127.0.0.1:39123/tmp/www: connect: SSH handshake with 127.0.0.1:39123: no answer ... ; check that 127.0.0.1:39123 " +
		"is up and reachable from here, then rerun (-v or --output json: the whole error)"; got != want {
		t.Errorf("Brief:\n got  %s\n want %s", got, want)
	}
	if strings.Count(got, "(") != strings.Count(got, ")") {
		t.Errorf("unmatched parentheses in %d bytes: %s", len(got), got)
	}
}

func TestErrors(t *testing.T) {
	if b, d := Errors(nil); b != nil || d != nil {
		t.Errorf("Errors(nil) = %v, %v", b, d)
	}
	err := fmt.Errorf("list s3://b/r: %w", refused("Get", "http://127.0.0.1:9000/b?list-type=2"))
	b, d := Errors(err)
	if *d != err.Error() || *b != Brief(err) || *b == *d {
		t.Errorf("Errors = %q, %q", *b, *d)
	}
}
