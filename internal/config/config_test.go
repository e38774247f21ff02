package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// TestDecodeErrors runs the cases of each topic in turn (see
// decode_errors_test.go): fields and references, destinations, paths and
// their neighbours, blocks and notifications, then whole documents.
func TestDecodeErrors(t *testing.T) {
	tests := slices.Concat(decodeFieldErrs(), decodeDestinationErrs(), decodePathErrs(), decodeBlockAndNotificationErrs(), decodeDocumentErrs())
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
