package ftp_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage/blocktest"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
)

// TestBlockSchema: schema.json says what the Block struct says.
func TestBlockSchema(t *testing.T) {
	blocktest.CheckSchema(t, ftp.Block{}, ftp.Backend().Schema, "backend.go")
}

// TestDecode: defaults (port 21, or 990 with tls: implicit; explicit TLS),
// brackets come off an IPv6 host, tls: none needs insecure_plaintext, and
// each member's problem is reported once, in the block's order.
func TestDecode(t *testing.T) {
	b := &blocktest.Map{Values: map[string]any{"host": "[::1]", "user": "u", "idle_timeout": "5s"}}
	got := ftp.Backend().Decode(b).(*ftp.Options)
	want := ftp.Options{Host: "::1", Port: 21, User: "u", TLS: ftp.TLSExplicit, Connections: 4, IdleTimeout: 5 * time.Second}
	if len(b.Problems) > 0 || *got != want {
		t.Errorf("Decode = %+v, problems %q; want %+v", *got, b.Problems, want)
	}
	b = &blocktest.Map{Values: map[string]any{"host": "h", "user": "u", "tls": "implicit", "password": "pw"}}
	if got := ftp.Backend().Decode(b).(*ftp.Options); got.Port != 990 || got.Password != "pw" || len(b.Problems) > 0 {
		t.Errorf("implicit TLS: port %d, password set %v, problems %q; want 990", got.Port, got.Password == "pw", b.Problems)
	}
	b = &blocktest.Map{Values: map[string]any{"host": "h:21", "port": int64(0), "user": "a b", "tls": "plain",
		"connections": int64(17), "server_name": "x y"}}
	ftp.Backend().Decode(b)
	wantProblems := []string{
		`host: "h:21" must be a host name or IP address; put the port in ftp.port`,
		"port: 0 is not a TCP port (1 to 65535)",
		`user: "a b" is not a user name`,
		`tls: "plain" is not a valid tls mode (explicit, implicit or none)`,
		`server_name: "x y" is not a valid host name`,
		"connections: 17 is not number of connections (1 to 16)",
	}
	if !slices.Equal(b.Problems, wantProblems) {
		t.Errorf("problems %q; want %q", b.Problems, wantProblems)
	}
	b = &blocktest.Map{Values: map[string]any{"host": "h", "user": "u", "tls": "none"}}
	ftp.Backend().Decode(b)
	if len(b.Problems) != 1 || !strings.Contains(b.Problems[0], "insecure_plaintext") {
		t.Errorf("tls: none without insecure_plaintext: problems %q", b.Problems)
	}
	b = &blocktest.Map{Values: map[string]any{"host": "h", "user": "u", "tls": "none", "insecure_plaintext": true}}
	if got := ftp.Backend().Decode(b).(*ftp.Options); len(b.Problems) > 0 || got.TLS != ftp.TLSNone {
		t.Errorf("tls: none with insecure_plaintext: %+v, problems %q", got, b.Problems)
	}
}

// TestPasswordNeverPrinted: the settings print without the password, and
// Location names the server, not the account.
func TestPasswordNeverPrinted(t *testing.T) {
	o := ftp.Options{Host: "h", Port: 21, User: "u", Password: "s3cret"}
	for _, s := range []string{fmt.Sprint(o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o), fmt.Sprintf("%v", &o), fmt.Sprintf("%s", o.Password), fmt.Sprintf("%q", o.Password)} {
		if strings.Contains(s, "s3cret") {
			t.Errorf("printed the password: %s", s)
		}
	}
	if got := ftp.Backend().Location(&o); got != "ftp://h:21" {
		t.Errorf("Location = %q, want ftp://h:21", got)
	}
}
