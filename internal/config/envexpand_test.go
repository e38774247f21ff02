package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/sftp"
)

// TestEnvReferences: ${VAR} in string values expands from the environment,
// also into numbers; $$ is a literal $; ids, references and secret_env are
// left alone; an unset variable is a problem naming it, its line and field.
func TestEnvReferences(t *testing.T) {
	env := map[string]string{"ROOT": "/srv/www", "HOST": "sftp.example.com", "PORT": "2222", "PIPE": "p"}
	getenv := func(k string) string { return env[k] }
	const doc = `pipelines:
  - id: p
    source: /b
    destinations: [d]
destinations:
  - id: d
    backend: sftp
    path: ${ROOT}/reports
    paths: {prefix: "cost-$$5/"}
    sftp:
      host: ${HOST}
      port: ${PORT}
      user: u
      known_hosts_file: /kh
notifications:
  - id: n
    webhook: {url: "https://h/x", secret_env: HOOK_SECRET}
    on: [failed]
`
	cfg, err := DecodeEnv([]byte(doc), filepath.Join(t.TempDir(), "c.yaml"), getenv)
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Destinations[0]
	o := d.Settings.(*sftp.Options)
	if d.Path != "/srv/www/reports" || o.Host != "sftp.example.com" || o.Port != 2222 || d.Paths.Prefix != "cost-$5/" {
		t.Errorf("got path %q host %q port %d prefix %q", d.Path, o.Host, o.Port, d.Paths.Prefix)
	}
	if cfg.Notifications[0].SecretEnv != "HOOK_SECRET" {
		t.Errorf("secret_env changed: %q", cfg.Notifications[0].SecretEnv)
	}

	for _, tc := range []struct {
		name, from, to string
		line           int
		field, msg     string
	}{
		{"unset", "${HOST}", "${NOPE}", 11, "destinations[0].sftp.host", "${NOPE} is not set (or empty) in the environment"},
		{"unterminated", "${ROOT}/reports", "${ROOT/reports", 8, "destinations[0].path", `"${" without its "}"`},
		{"bad name", "${ROOT}/reports", "${RO OT}/reports", 8, "destinations[0].path", "not a valid environment variable name"},
		{"not in ids", "id: p", "id: ${PIPE}", 2, "pipelines[0].id", "is not a valid id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeEnv([]byte(strings.Replace(doc, tc.from, tc.to, 1)), "c.yaml", getenv)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want a config error, got %v", err)
			}
			p := ce.Problems[0]
			if p.Line != tc.line || p.Field != tc.field || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("got %d %s %q, want %d %s %q", p.Line, p.Field, p.Msg, tc.line, tc.field, tc.msg)
			}
		})
	}
}
