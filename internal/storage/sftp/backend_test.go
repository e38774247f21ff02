package sftp_test

import (
	"slices"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage/blocktest"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
)

// TestBlockSchema: schema.json says what the Block struct says.
func TestBlockSchema(t *testing.T) {
	blocktest.CheckSchema(t, sftp.Block{}, sftp.Backend().Schema, "backend.go")
}

// TestDecode: the port defaults to 22, brackets come off an IPv6 host,
// and each member's problem is reported once, in the block's order.
func TestDecode(t *testing.T) {
	b := &blocktest.Map{Values: map[string]any{"host": "[::1]", "user": "u", "known_hosts_file": "/kh",
		"identity_file": "", "keepalive_interval": "5s"}}
	got := sftp.Backend().Decode(b).(*sftp.Options)
	want := sftp.Options{Host: "::1", Port: 22, User: "u", KnownHostsFile: "/kh", KeepaliveInterval: 5 * time.Second}
	if len(b.Problems) > 0 || *got != want {
		t.Errorf("Decode = %+v, problems %q; want %+v", *got, b.Problems, want)
	}
	b = &blocktest.Map{Values: map[string]any{"host": "h:22", "port": int64(0), "user": "a b"}}
	got = sftp.Backend().Decode(b).(*sftp.Options)
	wantProblems := []string{
		`host: "h:22" must be a host name or IP address; put the port in sftp.port`,
		"port: 0 is not a TCP port (1 to 65535)",
		`user: "a b" is not a user name`,
		"known_hosts_file: is required (host keys are always verified)",
	}
	if !slices.Equal(b.Problems, wantProblems) || *got != (sftp.Options{Port: 22}) {
		t.Errorf("Decode = %+v, problems %q; want problems %q", *got, b.Problems, wantProblems)
	}
}
