package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/google/go-cmp/cmp"
)

// fullConfig is the spec's example, adapted: relative and ~/ local paths,
// every block set, and a second notification using every event.
const fullConfig = `pipelines:
  - id: weatherreporter.daily          # slug
    source: ./spool/tomorrow
    destinations: [latest, archive, mirror]

destinations:
  - id: latest
    backend: local
    path: out/{pipeline_id}/latest
    workflow: additive
    publish:
      html: true
      source: all
    paths:
      prefix: "tomorrow/"
      rename: {report.md: index.md, data/raw.csv: data.csv}
    markdown:
      template: ./report.html.tmpl
      raw_html: true
    links:
      base_url: https://reports.example.com/weather/latest
      pretty: true
    retention:
      prune:
        older_than: 30d
        keep_min: 5

  - id: archive
    backend: s3
    path: reports/weather/archive/
    paths: {prefix: "{source_date}/"}
    s3:
      bucket: reports
      region: us-east-1
      endpoint: http://127.0.0.1:9000
      path_style: true

  - id: mirror
    backend: sftp
    path: /var/www//reports/{source_id}/
    workflow: replacement
    publish: {html: false, source: none}
    retention: {prune: {older_than: 1d12h}}
    sftp:
      host: web1.example.com
      port: 2222
      user: publisher
      identity_file: ~/.ssh/id_ed25519
      known_hosts_file: ~/.ssh/known_hosts

notifications:
  - id: ops
    webhook:
      url: https://hooks.example.com/distributor
      secret_env: DISTRIBUTOR_WEBHOOK_SECRET
    on: [published, failed]
  - id: audit
    webhook: {url: "http://10.0.0.1:8080/hook?x=1"}
    "on":
      - skipped
      - published
      - failed
`

func TestDecodeFull(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	file := filepath.Join(dir, "distributor.yaml")

	got, err := Decode([]byte(fullConfig), file)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := &Config{
		File: file,
		Pipelines: []Pipeline{{
			ID:           "weatherreporter.daily",
			Source:       filepath.Join(dir, "spool/tomorrow"),
			Destinations: []string{"latest", "archive", "mirror"},
			Line:         2,
		}},
		Destinations: []Destination{
			{
				ID:       "latest",
				Backend:  "local",
				Path:     filepath.Join(dir, "out/{pipeline_id}/latest"),
				Workflow: WorkflowAdditive,
				Publish:  Publish{HTML: true, Source: SourceAll},
				Paths: Paths{
					Prefix:      "tomorrow/",
					Rename:      map[string]string{"report.md": "index.md", "data/raw.csv": "data.csv"},
					RenameLines: map[string]int{"report.md": 16, "data/raw.csv": 16},
				},
				Markdown:  Markdown{Template: filepath.Join(dir, "report.html.tmpl"), RawHTML: true},
				Links:     Links{BaseURL: "https://reports.example.com/weather/latest/", Pretty: true, Missing: MissingWarn},
				Retention: &Retention{Prune: &Prune{OlderThan: 30 * 24 * time.Hour, KeepMin: 5}},
				Line:      7,
			},
			{
				ID:       "archive",
				Backend:  "s3",
				Path:     "reports/weather/archive",
				Workflow: WorkflowAdditive,
				Publish:  Publish{HTML: true, Source: SourceAssets},
				Paths:    Paths{Prefix: "{source_date}/"},
				Links:    Links{Missing: MissingWarn},
				Settings: &s3.Options{Bucket: "reports", Region: "us-east-1", Endpoint: "http://127.0.0.1:9000", PathStyle: true},
				Line:     28,
			},
			{
				ID:        "mirror",
				Backend:   "sftp",
				Path:      "/var/www/reports/{source_id}",
				Workflow:  WorkflowReplacement,
				Publish:   Publish{HTML: false, Source: SourceNone},
				Links:     Links{Missing: MissingWarn},
				Retention: &Retention{Prune: &Prune{OlderThan: 36 * time.Hour}},
				Settings: &sftp.Options{
					Host:           "web1.example.com",
					Port:           2222,
					User:           "publisher",
					IdentityFile:   filepath.Join(home, ".ssh/id_ed25519"),
					KnownHostsFile: filepath.Join(home, ".ssh/known_hosts"),
				},
				LocalFiles: []LocalFile{
					{Field: "sftp.identity_file", Path: filepath.Join(home, ".ssh/id_ed25519")},
					{Field: "sftp.known_hosts_file", Path: filepath.Join(home, ".ssh/known_hosts")},
				},
				Line: 38,
			},
		},
		Notifications: []Notification{
			{
				ID:        "ops",
				URL:       "https://hooks.example.com/distributor",
				SecretEnv: "DISTRIBUTOR_WEBHOOK_SECRET",
				On:        []string{EventPublished, EventFailed},
				Line:      52,
			},
			{
				ID:   "audit",
				URL:  "http://10.0.0.1:8080/hook?x=1",
				On:   []string{EventSkipped, EventPublished, EventFailed},
				Line: 57,
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode mismatch (-want +got):\n%s", diff)
	}

	if d, _ := got.Destination("latest"); d.FixedPath() {
		t.Errorf("latest: FixedPath() = true, want false")
	}
	if p, ok := got.Pipeline("weatherreporter.daily"); !ok || p.Line != 2 {
		t.Errorf("Pipeline lookup = %v, %v", p, ok)
	}
}

// minimal is the smallest valid configuration; the tests below rely on its
// line numbers (1-8).
const minimal = `pipelines:
  - id: p
    source: ./bundle
    destinations: [d]
destinations:
  - id: d
    backend: local
    path: ./out
`

func TestDecodeDefaults(t *testing.T) {
	dir := t.TempDir()
	got, err := Decode([]byte(minimal), filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := Destination{
		ID:       "d",
		Backend:  "local",
		Path:     filepath.Join(dir, "out"),
		Workflow: WorkflowAdditive,
		Publish:  Publish{HTML: true, Source: SourceAssets},
		Links:    Links{Missing: MissingWarn},
		Line:     6,
	}
	if diff := cmp.Diff(want, got.Destinations[0]); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if !got.Destinations[0].FixedPath() {
		t.Error("FixedPath() = false for a path without placeholders")
	}
	if len(got.Notifications) != 0 {
		t.Errorf("Notifications = %v, want none", got.Notifications)
	}

	// Empty and null optional blocks keep the defaults too.
	got, err = Decode([]byte(minimal+"    workflow:\n    publish: {}\n    paths: {prefix: \"\", rename: {}}\n    markdown: {template: \"\"}\n    links: {base_url: \"\"}\n    retention: {}\n"), filepath.Join(dir, "c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want.Retention = &Retention{}
	if diff := cmp.Diff(want, got.Destinations[0]); diff != "" {
		t.Errorf("empty blocks (-want +got):\n%s", diff)
	}

	// sftp port defaults to 22.
	got, err = Decode([]byte(`pipelines: [{id: p, source: /b, destinations: [d]}]
destinations:
  - {id: d, backend: sftp, path: /srv, sftp: {host: "[::1]", user: u, known_hosts_file: /kh}}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&sftp.Options{Host: "::1", Port: 22, User: "u", KnownHostsFile: "/kh"}, got.Destinations[0].Settings); diff != "" {
		t.Errorf("sftp defaults (-want +got):\n%s", diff)
	}
}

// TestPrefixIsAFolder pins the prefix rule: a non-empty prefix names a
// folder and must end with "/"; it is prepended to output paths verbatim.
func TestPrefixIsAFolder(t *testing.T) {
	for _, prefix := range []string{"a/b/", "{source_date}/", "{pipeline_id}/{source_created}/"} {
		cfg, err := Decode([]byte(minimal+"    paths: {prefix: \""+prefix+"\"}\n"), "c.yaml")
		if err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		if got := cfg.Destinations[0].Paths.Prefix; got != prefix {
			t.Errorf("prefix %q decoded as %q", prefix, got)
		}
	}
	for _, prefix := range []string{"report-", "tomorrow", "{source_date}-"} {
		_, err := Decode([]byte(minimal+"    paths: {prefix: \""+prefix+"\"}\n"), "c.yaml")
		if err == nil || !strings.Contains(err.Error(), "c.yaml:9: destinations[0].paths.prefix") || !strings.Contains(err.Error(), `must end with "/"`) {
			t.Errorf("prefix %q: error %v, want a message naming the field and asking for a trailing /", prefix, err)
		}
	}
	got, err := Expand("{source_date}/", Vars{SourceCreated: time.Date(2026, 6, 19, 23, 0, 0, 0, time.FixedZone("x", -3*3600))})
	if err != nil || got != "2026-06-20/" {
		t.Errorf("Expand prefix = %q, %v", got, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	dest := func(extra string) string { return minimal + extra } // extra starts at line 9
	tests := []struct {
		name  string
		yaml  string
		line  int
		field string
		msg   string
		n     int // number of problems; 0 means 1
	}{
		{"unknown field suggests", dest("    worklfow: additive\n"), 9, "destinations[0]", `unknown field "worklfow"; did you mean "workflow"?`, 0},
		{"misspelled required field", strings.Replace(minimal, "    source:", "    sorce:", 1), 3, "pipelines[0]", `unknown field "sorce"; did you mean "source"?`, 0},
		{"unknown top-level field", "pipeline: []\n" + minimal, 1, "", `unknown field "pipeline"; did you mean "pipelines"?`, 0},
		{"unknown field no suggestion", dest("    colour: blue\n"), 9, "destinations[0]", `unknown field "colour"`, 0},
		{"misplaced field", dest("    bucket: x\n"), 9, "destinations[0]", `belongs in the s3 or gcs block (s3.bucket or gcs.bucket)`, 0},
		{"legacy state", dest("    state: shared_root\n"), 9, "destinations[0]", `field "state" is no longer supported: ownership is recorded in the catalog; use workflow: additive or workflow: replacement`, 0},
		{"legacy reconciliation", dest("    reconciliation: strict\n"), 9, "destinations[0]", `"reconciliation" is no longer supported`, 0},
		{"legacy takeover", dest("    takeover: true\n"), 9, "destinations[0]", `"takeover" is no longer supported`, 0},
		{"legacy transfer", dest("    transfer: {mode: copy}\n"), 9, "destinations[0]", `"transfer" is no longer supported`, 0},
		{"bad slug", strings.Replace(minimal, "id: p", "id: Weather_Report!", 1), 2, "pipelines[0].id", `"Weather_Report!" is not a valid id`, 0},
		{"slug too long", strings.Replace(minimal, "id: p", "id: "+strings.Repeat("a", 65), 1), 2, "pipelines[0].id", `is not a valid id`, 0},
		{"duplicate destination id", dest("  - id: d\n    backend: local\n    path: /x\n"), 9, "destinations[1].id", `duplicate destination id "d" (first defined at line 6)`, 0},
		{"duplicate pipeline id", strings.Replace(minimal, "destinations:\n  - id: d", "  - {id: p, source: /s, destinations: [d]}\ndestinations:\n  - id: d", 1), 5, "pipelines[1].id", `duplicate pipeline id "p" (first defined at line 2)`, 0},
		{"duplicate notification id", minimal + "notifications:\n  - {id: n, webhook: {url: http://h/}, on: [failed]}\n  - {id: n, webhook: {url: http://h/}, on: [failed]}\n", 11, "notifications[1].id", `duplicate notification id "n" (first defined at line 10)`, 0},
		{"unknown destination", strings.Replace(minimal, "[d]", "[d, dd]", 1), 4, "pipelines[0].destinations[1]", `unknown destination "dd"`, 0},
		{"unknown destination suggests", strings.Replace(strings.Replace(minimal, "[d]", "[lates]", 1), "id: d", "id: latest", 1), 4, "pipelines[0].destinations[0]", `unknown destination "lates"; did you mean "latest"?`, 0},
		{"destination listed twice", strings.Replace(minimal, "[d]", "[d, d]", 1), 4, "pipelines[0].destinations[1]", `destination "d" is listed twice (first at line 4)`, 0},
		{"pipeline without destinations", strings.Replace(minimal, "    destinations: [d]\n", "", 1), 2, "pipelines[0].destinations", `is required`, 0},
		{"pipeline with empty destinations", strings.Replace(minimal, "[d]", "[]", 1), 4, "pipelines[0].destinations", `at least one destination id is required`, 0},
		{"missing source", strings.Replace(minimal, "    source: ./bundle\n", "", 1), 2, "pipelines[0].source", `is required`, 0},
		{"missing sftp block", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv", 1), 7, "destinations[0].sftp", `backend sftp needs an sftp block`, 0},
		{"missing s3 block", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3", 1), 7, "destinations[0].s3", `backend s3 needs an s3 block (with bucket)`, 0},
		{"forbidden s3 block", dest("    s3: {bucket: reports}\n"), 9, "destinations[0].s3", `only allowed with backend: s3 (this destination's backend is local)`, 0},
		{"forbidden sftp block", dest("    sftp:\n      host: h\n"), 9, "destinations[0].sftp", `only allowed with backend: sftp`, 0},
		{"relative sftp path", strings.Replace(minimal, "backend: local", "backend: sftp\n    sftp: {host: h, user: u, known_hosts_file: kh}", 1), 9, "destinations[0].path", `"./out" must be an absolute path on the server`, 0},
		{"leading slash s3 path", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    path: /reports\n    s3: {bucket: reports}", 1), 8, "destinations[0].path", `"/reports" must be a key prefix without a leading /`, 0},
		{"dotdot s3 path", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    path: a/../b\n    s3: {bucket: reports}", 1), 8, "destinations[0].path", `has a ".." segment`, 0},
		{"double slash s3 path", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    path: a//b\n    s3: {bucket: reports}", 1), 8, "destinations[0].path", `empty segment`, 0},
		{"missing local path", strings.Replace(minimal, "    path: ./out\n", "", 1), 6, "destinations[0].path", `is required`, 0},
		{"bad backend", strings.Replace(minimal, "backend: local", "backend: ftp", 1), 7, "destinations[0].backend", `"ftp" is not one of local, sftp, s3`, 0},
		{"missing backend", strings.Replace(minimal, "    backend: local\n", "", 1), 6, "destinations[0].backend", `is required (local, sftp, s3`, 0},
		{"zero sftp keepalive", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp: {host: h, user: u, known_hosts_file: kh, keepalive_timeout: 0s}", 1), 9, "destinations[0].sftp.keepalive_timeout", `must be greater than zero`, 0},
		{"bad s3 idle timeout", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    s3: {bucket: reports, idle_timeout: 30 seconds}", 1), 8, "destinations[0].s3.idle_timeout", `invalid duration`, 0},
		{"single_writer not bool", dest("    single_writer: yes please\n"), 9, "destinations[0].single_writer", `must be true or false`, 0},
		{"bad workflow", dest("    workflow: replace\n"), 9, "destinations[0].workflow", `"replace" is not one of additive, replacement; did you mean "replacement"?`, 0},
		{"bad workflow suggests", dest("    workflow: additve\n"), 9, "destinations[0].workflow", `did you mean "additive"?`, 0},
		{"bad publish.source", dest("    publish:\n      source: everything\n"), 10, "destinations[0].publish.source", `"everything" is not one of all, assets, none`, 0},
		{"publish.html not bool", dest("    publish:\n      html: \"yes\"\n"), 10, "destinations[0].publish.html", `must be true or false, not the string "yes"`, 0},
		{"bad placeholder", strings.Replace(minimal, "./out", "./out/{nope}", 1), 8, "destinations[0].path", `unknown placeholder "{nope}"`, 0},
		{"unclosed placeholder", dest("    paths:\n      prefix: \"{source_date/\"\n"), 10, "destinations[0].paths.prefix", `unclosed "{"`, 0},
		{"unmatched brace", dest("    paths: {prefix: \"a}/\"}\n"), 9, "destinations[0].paths.prefix", `unmatched "}"`, 0},
		{"placeholder in source", strings.Replace(minimal, "./bundle", "./bundle/{source_id}", 1), 3, "pipelines[0].source", `placeholder {source_id} is not allowed here: placeholders are only allowed in path and paths.prefix`, 0},
		{"placeholder in template", dest("    markdown: {template: \"{pipeline_id}.tmpl\"}\n"), 9, "destinations[0].markdown.template", `only allowed in path and paths.prefix`, 0},
		{"bad prefix", dest("    paths: {prefix: \"../\"}\n"), 9, "destinations[0].paths.prefix", `has a ".." segment`, 0},
		{"absolute prefix", dest("    paths: {prefix: /abs/}\n"), 9, "destinations[0].paths.prefix", `is absolute`, 0},
		{"rename key unclean", dest("    paths:\n      rename:\n        /report.md: index.md\n"), 11, `destinations[0].paths.rename["/report.md"]`, `source path "/report.md" is not clean`, 0},
		{"rename value reserved", dest("    paths:\n      rename:\n        report.md: .distributor.json\n"), 11, `destinations[0].paths.rename["report.md"]`, `reserved`, 0},
		{"rename targets unique", dest("    paths:\n      rename:\n        a.md: x.md\n        b.md: x.md\n"), 12, `destinations[0].paths.rename["b.md"]`, `output path "x.md" is already the target of another rename (line 11)`, 0},
		{"rename not a mapping", dest("    paths:\n      rename: [a, b]\n"), 10, "destinations[0].paths.rename", `must be a mapping of source path to output path, not a list`, 0},
		{"bad base_url scheme", dest("    links:\n      base_url: ftp://example.com/x/\n"), 10, "destinations[0].links.base_url", `must be an absolute http:// or https:// URL`, 0},
		{"relative base_url", dest("    links: {base_url: /reports/}\n"), 9, "destinations[0].links.base_url", `must be an absolute http:// or https:// URL`, 0},
		{"base_url with query", dest("    links: {base_url: \"https://e.com/?a=1\"}\n"), 9, "destinations[0].links.base_url", `must not have a query or fragment`, 0},
		{"bad links.missing", dest("    links: {missing: error}\n"), 9, "destinations[0].links.missing", `"error" is not one of warn, fail`, 0},
		{"misplaced missing", dest("    missing: fail\n"), 9, "destinations[0]", `it belongs in the links block (links.missing)`, 0},
		{"bad duration unit", dest("    retention:\n      prune:\n        older_than: 30x\n"), 11, "destinations[0].retention.prune.older_than", `unknown unit "x"`, 0},
		{"duration without unit", dest("    retention:\n      prune:\n        older_than: 30\n"), 11, "destinations[0].retention.prune.older_than", `missing unit after 30`, 0},
		{"zero duration", dest("    retention: {prune: {older_than: 0d}}\n"), 9, "destinations[0].retention.prune.older_than", `must be greater than zero`, 0},
		{"prune needs older_than", dest("    retention:\n      prune:\n        keep_min: 3\n"), 10, "destinations[0].retention.prune.older_than", `is required`, 0},
		{"negative keep_min", dest("    retention:\n      prune:\n        older_than: 1d\n        keep_min: -1\n"), 12, "destinations[0].retention.prune.keep_min", `must be 0 or more, not -1`, 0},
		{"keep_min not a number", dest("    retention: {prune: {older_than: 1d, keep_min: five}}\n"), 9, "destinations[0].retention.prune.keep_min", `must be a whole number, not the string "five"`, 0},
		{"bad port", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp:\n      host: h\n      port: 70000\n      user: u\n      known_hosts_file: kh", 1), 11, "destinations[0].sftp.port", `70000 is not a TCP port (1 to 65535)`, 0},
		{"port as string", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp: {host: h, port: \"22\", user: u, known_hosts_file: kh}", 1), 9, "destinations[0].sftp.port", `must be a whole number`, 0},
		{"host with port", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp: {host: \"h:22\", user: u, known_hosts_file: kh}", 1), 9, "destinations[0].sftp.host", `put the port in sftp.port`, 0},
		{"sftp missing host user known_hosts", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp:\n      port: 22", 1), 9, "destinations[0].sftp.host", `is required`, 3},
		{"sftp missing known_hosts_file", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: sftp\n    path: /srv\n    sftp:\n      host: h\n      user: u", 1), 9, "destinations[0].sftp.known_hosts_file", `is required (host keys are always verified)`, 0},
		{"bad bucket", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    s3:\n      bucket: My_Bucket", 1), 9, "destinations[0].s3.bucket", `"My_Bucket" is not a valid bucket name`, 0},
		{"bad endpoint", strings.Replace(minimal, "backend: local\n    path: ./out", "backend: s3\n    s3:\n      bucket: reports\n      endpoint: 127.0.0.1:9000", 1), 10, "destinations[0].s3.endpoint", `must be an absolute http:// or https:// URL`, 0},
		{"bad notification event", minimal + "notifications:\n  - id: n\n    webhook: {url: https://h/}\n    on: [published, sucess]\n", 12, "notifications[0].on[1]", `"sucess" is not one of published, skipped, failed`, 0},
		{"duplicate notification event", minimal + "notifications:\n  - id: n\n    webhook: {url: https://h/}\n    on:\n      - failed\n      - failed\n", 14, "notifications[0].on[1]", `event "failed" is listed twice (first at line 13)`, 0},
		{"empty notification events", minimal + "notifications:\n  - id: n\n    webhook: {url: https://h/}\n    on: []\n", 12, "notifications[0].on", `at least one event is required`, 0},
		{"missing notification events", minimal + "notifications:\n  - id: n\n    webhook: {url: https://h/}\n", 10, "notifications[0].on", `is required`, 0},
		{"bad secret_env", minimal + "notifications:\n  - id: n\n    webhook:\n      url: https://h/\n      secret_env: MY-SECRET\n    on: [failed]\n", 13, "notifications[0].webhook.secret_env", `"MY-SECRET" is not an environment variable name`, 0},
		{"secret_env with dollar", minimal + "notifications:\n  - id: n\n    webhook:\n      url: https://h/\n      secret_env: $SECRET\n    on: [failed]\n", 13, "notifications[0].webhook.secret_env", `without $`, 0},
		{"bad webhook url", minimal + "notifications:\n  - id: n\n    webhook: {url: \"hooks.example.com\"}\n    on: [failed]\n", 11, "notifications[0].webhook.url", `must be an absolute http:// or https:// URL`, 0},
		{"url outside webhook", minimal + "notifications:\n  - id: n\n    url: https://h/\n    webhook: {url: https://h/}\n    on: [failed]\n", 11, "notifications[0]", `belongs in the webhook block (webhook.url)`, 0},
		{"missing webhook", minimal + "notifications:\n  - id: n\n    on: [failed]\n", 10, "notifications[0].webhook", `is required`, 0},
		{"wrong type string for list", strings.Replace(minimal, "[d]", "d", 1), 4, "pipelines[0].destinations", `must be a list, not the string "d" (write [d])`, 0},
		{"wrong type list for string", strings.Replace(minimal, "id: p", "id: [p]", 1), 2, "pipelines[0].id", `must be a string, not a list`, 0},
		{"wrong type pipelines mapping", "pipelines: {id: p}\n", 1, "pipelines", `must be a list, not a mapping`, 0},
		{"empty pipelines", "pipelines: []\n", 1, "pipelines", `at least one pipeline is required`, 0},
		{"missing pipelines", "destinations: []\n", 1, "pipelines", `at least one pipeline is required`, 0},
		{"empty file", "", 0, "pipelines", `at least one pipeline is required`, 0},
		{"not a mapping", "- a\n- b\n", 1, "", `the configuration must be a mapping`, 0},
		{"invalid yaml", "pipelines:\n  - id: p\nsource x\ndestinations: []\n", 3, "", `invalid YAML`, 0},
		{"repeated field", dest("    path: ./other\n"), 9, "destinations[0].path", `set twice (first at line 8)`, 0},
		{"two documents", minimal + "---\npipelines: []\n", 9, "", `second YAML document`, 0},
		{"merge key", "base: &b {backend: local, path: /x}\n" + minimal, 1, "", `unknown field "base"`, 0},
		{"merge key in destination", dest("    <<: {workflow: additive}\n"), 9, "destinations[0]", `merge keys (<<) are not supported`, 0},
		{"tilde user", strings.Replace(minimal, "./bundle", "~bob/bundle", 1), 3, "pipelines[0].source", `not ~user`, 0},
		{"on as key in the wrong place", dest("    on: [failed]\n"), 9, "destinations[0]", `unknown field "on"`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Decode([]byte(tt.yaml), "distributor.yaml")
			if err == nil {
				t.Fatalf("Decode succeeded (%+v), want error", cfg)
			}
			if cfg != nil {
				t.Errorf("Decode returned a config with an error")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *Error", err, err)
			}
			want := 1
			if tt.n != 0 {
				want = tt.n
			}
			if len(ce.Problems) != want {
				t.Errorf("got %d problems, want %d:\n%v", len(ce.Problems), want, err)
			}
			found := false
			for _, p := range ce.Problems {
				if p.Line == tt.line && p.Field == tt.field && strings.Contains(p.Msg, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem at line %d, field %q, containing %q; got:\n%v", tt.line, tt.field, tt.msg, err)
			}
			prefix := "distributor.yaml:"
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("Error() = %q, want prefix %q", err.Error(), prefix)
			}
		})
	}
}

func TestErrorCollectsAll(t *testing.T) {
	src := `pipelines:
  - id: Bad
    source: ./b
    destinations: [nope]
destinations:
  - id: d
    backend: local
    path: ./x
    worklfow: additive
    links: {base_url: "mailto:x@example.com"}
bogus: 1
`
	_, err := Decode([]byte(src), "distributor.yaml")
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("want *Error, got %v", err)
	}
	want := `distributor.yaml:2: pipelines[0].id: "Bad" is not a valid id: use 1 to 64 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit
distributor.yaml:4: pipelines[0].destinations[0]: unknown destination "nope"
distributor.yaml:9: destinations[0]: unknown field "worklfow"; did you mean "workflow"?
distributor.yaml:10: destinations[0].links.base_url: "mailto:x@example.com" must be an absolute http:// or https:// URL
distributor.yaml:11: unknown field "bogus"`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("Error() (-want +got):\n%s", diff)
	}
	e := &Error{Problems: []Problem{{Msg: "m"}}}
	if got := e.Error(); got != "config: m" {
		t.Errorf("Error() without file or line = %q", got)
	}
}

func TestLocalPathResolution(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		in, want string
	}{
		{"./bundle", "DIR/bundle"},
		{"bundle/../other/", "DIR/other"},
		{"../up", "PARENT/up"},
		{"/abs/path", "/abs/path"},
		{"~/b", "HOME/b"},
		{"~", "HOME"},
		{"~/", "HOME"},
		{"{x}", ""}, // for source, braces that are not placeholders are literal
	}
	dir := filepath.Join(t.TempDir(), "conf")
	repl := strings.NewReplacer("DIR", dir, "PARENT", filepath.Dir(dir), "HOME", home)
	for _, tt := range tests {
		y := strings.Replace(minimal, "./bundle", `"`+tt.in+`"`, 1)
		cfg, err := Decode([]byte(y), filepath.Join(dir, "distributor.yaml"))
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		want := repl.Replace(tt.want)
		if tt.want == "" {
			want = filepath.Join(dir, tt.in)
		}
		if got := cfg.Pipelines[0].Source; got != want {
			t.Errorf("source %q resolved to %q, want %q", tt.in, got, want)
		}
	}

	// A relative config file name resolves against the working directory;
	// "" means the working directory itself.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for file, base := range map[string]string{"sub/c.yaml": filepath.Join(wd, "sub"), "": wd} {
		cfg, err := Decode([]byte(strings.Replace(minimal, "./out", "~/out/{destination_id}", 1)), file)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := cfg.Pipelines[0].Source, filepath.Join(base, "bundle"); got != want {
			t.Errorf("file %q: source = %q, want %q", file, got, want)
		}
		if got, want := cfg.Destinations[0].Path, filepath.Join(home, "out/{destination_id}"); got != want {
			t.Errorf("file %q: path = %q, want %q", file, got, want)
		}
		if file == "" && cfg.File != "" {
			t.Errorf("File = %q for an unnamed config", cfg.File)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("distributor.yaml", []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load("distributor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// t.TempDir may sit behind a symlink; compare with the working directory.
	wd, _ := os.Getwd()
	if want := filepath.Join(wd, "distributor.yaml"); cfg.File != want {
		t.Errorf("File = %q, want %q", cfg.File, want)
	}
	if want := filepath.Join(wd, "out"); cfg.Destinations[0].Path != want {
		t.Errorf("Path = %q, want %q", cfg.Destinations[0].Path, want)
	}

	if err := os.WriteFile("bad.yaml", []byte(minimal+"    nope: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load("bad.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "bad.yaml:9: destinations[0]: unknown field") {
		t.Errorf("Load(bad.yaml) error = %v", err)
	}

	_, err = Load("missing.yaml")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) error = %v, want fs.ErrNotExist", err)
	}
	if var_ce := (*Error)(nil); errors.As(err, &var_ce) {
		t.Errorf("read error should not be a *Error")
	}
}

func TestResolve(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvConfig {
				return v
			}
			return ""
		}
	}
	tests := []struct {
		name   string
		flag   string
		getenv func(string) string
		want   string
		err    bool
	}{
		{"flag wins", "a.yaml", env("b.yaml"), "a.yaml", false},
		{"env", "", env("/etc/b.yaml"), "/etc/b.yaml", false},
		{"default", "", env(""), "distributor.yaml", false},
		{"nil getenv", "", nil, "distributor.yaml", false},
		{"blank flag", "  ", env("b.yaml"), "", true},
		{"blank env", "", env(" "), "", true},
	}
	for _, tt := range tests {
		got, err := Resolve(tt.flag, tt.getenv)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("%s: Resolve = %q, %v; want %q, err %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"30d", 30 * 24 * time.Hour, ""},
		{"1d12h", 36 * time.Hour, ""},
		{"90m", 90 * time.Minute, ""},
		{"45s", 45 * time.Second, ""},
		{"1d2h3m4s", 26*time.Hour + 3*time.Minute + 4*time.Second, ""},
		{"0d", 0, ""},
		{"007h", 7 * time.Hour, ""},
		{"", 0, "empty"},
		{"30", 0, "missing unit after 30"},
		{"d", 0, "expected a number"},
		{"30x", 0, `unknown unit "x"`},
		{"1w", 0, `unknown unit "w"`},
		{"1.5h", 0, `unknown unit "."`},
		{"-1d", 0, "expected a number"},
		{"1h1d", 0, "largest to smallest"},
		{"1h1h", 0, "largest to smallest"},
		{"1d 2h", 0, `expected a number at " 2h"`},
		{"1D", 0, `unknown unit "D"`},
		{"106752d", 0, "too large"},
		{"99999999999999999999s", 0, "too large"},
		{"106751d23h47m16s", 106751*24*time.Hour + 23*time.Hour + 47*time.Minute + 16*time.Second, ""},
		{"106751d23h47m17s", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseDuration(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestExpand(t *testing.T) {
	created := time.Date(2026, 6, 19, 12, 0, 5, 0, time.UTC)
	all := Vars{PipelineID: "weather.daily", DestinationID: "latest", SourceID: "weatherreporter.tomorrow", SourceCreated: created}
	noSource := Vars{PipelineID: "p", DestinationID: "d"}
	tests := []struct {
		in   string
		v    Vars
		want string
		err  string
	}{
		{"/srv/plain", Vars{}, "/srv/plain", ""},
		{"", Vars{}, "", ""},
		{"/srv/{pipeline_id}/{destination_id}", all, "/srv/weather.daily/latest", ""},
		{"{source_id}/{source_date}/", all, "weatherreporter.tomorrow/2026-06-19/", ""},
		{"x-{source_created}-{source_created}", all, "x-20260619T120005Z-20260619T120005Z", ""},
		{"{source_date}", Vars{SourceCreated: time.Date(2026, 6, 19, 22, 0, 0, 0, time.FixedZone("m", -5*3600))}, "2026-06-20", ""},
		{"/srv/{pipeline_id}", noSource, "/srv/p", ""},
		{"/srv/{source_id}", noSource, "", "{source_id} needs a source bundle"},
		{"/srv/{source_date}", noSource, "", "{source_date} needs a source bundle"},
		{"/srv/{source_created}", noSource, "", "{source_created} needs a source bundle"},
		{"/srv/{destination_id}", Vars{}, "", "{destination_id} needs a destination id"},
		{"/srv/{nope}", all, "", `unknown placeholder "{nope}"`},
		{"/srv/{pipeline_id", all, "", `unclosed "{"`},
		{"/srv/}x", all, "", `unmatched "}"`},
		{"/srv/{{pipeline_id}}", all, "", `unknown placeholder "{{pipeline_id}"`},
		{"/srv/{pipeline_id}", Vars{PipelineID: ".."}, "", "not a single path segment"},
		{"/srv/{source_id}", Vars{SourceID: "a/b"}, "", "not a single path segment"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, tt.v)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Expand(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestPlaceholderPredicates(t *testing.T) {
	tests := []struct {
		in          string
		has, source bool
	}{
		{"/srv/www", false, false},
		{"/srv/{pipeline_id}", true, false},
		{"{destination_id}/", true, false},
		{"{source_id}", true, true},
		{"a/{source_date}/b", true, true},
		{"{source_created}", true, true},
		{"{nope}", false, false},
	}
	for _, tt := range tests {
		if got := HasPlaceholder(tt.in); got != tt.has {
			t.Errorf("HasPlaceholder(%q) = %v", tt.in, got)
		}
		if got := NeedsSource(tt.in); got != tt.source {
			t.Errorf("NeedsSource(%q) = %v", tt.in, got)
		}
		d := Destination{Path: tt.in}
		if got := d.FixedPath(); got == tt.has {
			t.Errorf("FixedPath(%q) = %v", tt.in, got)
		}
	}
}

func TestClosest(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"worklfow", "workflow"},
		{"Workflow", "workflow"},
		{"backen", "backend"},
		{"on", ""},
		{"xyz", ""},
		{"paths", "paths"},
		{"retent", "retention"}, // a unique prefix
		{"ret", ""},             // too short to be taken for a prefix
	}
	for _, tt := range tests {
		if got := Closest(tt.in, destinationFields()); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBadIDNoCascade(t *testing.T) {
	y := strings.Replace(strings.Replace(minimal, "[d]", "[D]", 1), "id: d", "id: D", 1)
	_, err := Decode([]byte(y), "c.yaml")
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].Field != "destinations[0].id" || ce.Problems[0].Line != 6 {
		t.Errorf("want only the bad destination id reported, got:\n%v", err)
	}
}

// TestDecodeTimeouts: the network deadlines of the sftp and s3 blocks are
// optional durations; absent means the adapter's default (0 here).
func TestDecodeTimeouts(t *testing.T) {
	yaml := `pipelines:
  - {id: p, source: /s, destinations: [a, b]}
destinations:
  - id: a
    backend: sftp
    path: /srv
    sftp: {host: h, user: u, known_hosts_file: /kh, dial_timeout: 10s, keepalive_interval: 5s, keepalive_timeout: 1m}
  - id: b
    backend: s3
    s3: {bucket: reports, dial_timeout: 2s, response_timeout: 1m, idle_timeout: 1m30s}
`
	cfg, err := Decode([]byte(yaml), "/etc/distributor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantSFTP := &sftp.Options{Host: "h", Port: 22, User: "u", KnownHostsFile: "/kh",
		DialTimeout: 10 * time.Second, KeepaliveInterval: 5 * time.Second, KeepaliveTimeout: time.Minute}
	if diff := cmp.Diff(wantSFTP, cfg.Destinations[0].Settings); diff != "" {
		t.Errorf("sftp (-want +got):\n%s", diff)
	}
	wantS3 := &s3.Options{Bucket: "reports", DialTimeout: 2 * time.Second, ResponseTimeout: time.Minute, IdleTimeout: 90 * time.Second}
	if diff := cmp.Diff(wantS3, cfg.Destinations[1].Settings); diff != "" {
		t.Errorf("s3 (-want +got):\n%s", diff)
	}
}
