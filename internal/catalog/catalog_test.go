package catalog

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

var src = Source{ID: "reports.example.2026-06-04",
	Digest:  "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	Created: mustTime("2026-06-04T11:55:00Z")}

func fullCatalog() *Catalog {
	return &Catalog{
		SchemaVersion: 4, DistributorVersion: "v0.1.0",
		CreatedAt: mustTime("2026-06-04T12:00:00Z"), UpdatedAt: mustTime("2026-06-04T12:10:00Z"),
		// Deliberately unsorted: Encode sorts by path.
		Outputs: []Output{
			{Path: "report.html", PipelineID: "reports", DestinationID: "static-site", Source: src,
				Kind: KindGenerated, SourcePath: "report.md", Transform: TransformMarkdown,
				URL:    "https://reports.example.com/archive/report.html",
				SHA256: "sha256:abcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcd", Size: 2345,
				CreatedAt: mustTime("2026-06-04T12:00:00Z"), UpdatedAt: mustTime("2026-06-04T12:10:00Z")},
			{Path: "assets/chart.png", PipelineID: "reports", DestinationID: "static-site", Source: src,
				Kind: KindSource, SHA256: "sha256:" + strings.Repeat("1", 64), Size: 0,
				// Sub-second and non-UTC input is normalised on encode.
				CreatedAt: mustTime("2026-06-04T14:00:00+02:00").Add(300 * time.Millisecond), UpdatedAt: mustTime("2026-06-04T12:00:00Z")},
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (-want +got):\n%s", name, cmp.Diff(string(want), string(got)))
	}
}

func TestEncodeGolden(t *testing.T) {
	got, err := Encode(fullCatalog())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "full.golden.json", got)

	empty := &Catalog{CreatedAt: mustTime("2026-06-04T12:00:00Z"), UpdatedAt: mustTime("2026-06-04T12:00:00Z")}
	got, err = Encode(empty)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "empty.golden.json", got)
}

func TestRoundTripIsByteIdentical(t *testing.T) {
	for _, name := range []string{"full.golden.json", "empty.golden.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		st := Read(data)
		if st.Status != StatusCatalog {
			t.Fatalf("%s: status %s (%v), want catalog", name, st.Status, st.Problem)
		}
		again, err := Encode(st.Catalog)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, data) {
			t.Errorf("%s: re-encoding changed the bytes:\n%s", name, cmp.Diff(string(data), string(again)))
		}
	}
}

func TestEncodeDoesNotMutateInput(t *testing.T) {
	c := fullCatalog()
	before := c.Outputs[0].Path
	if _, err := Encode(c); err != nil {
		t.Fatal(err)
	}
	if c.Outputs[0].Path != before {
		t.Errorf("Encode reordered the caller's outputs")
	}
}

func TestReadClassifies(t *testing.T) {
	valid, _ := os.ReadFile(filepath.Join("testdata", "full.golden.json"))
	cases := []struct {
		name    string
		data    []byte
		want    Status
		version int
		problem string
	}{
		{"missing file", nil, StatusNone, 0, ""},
		{"valid v4", valid, StatusCatalog, 4, ""},
		{"legacy v1", []byte(`{"schema_version":1,"anything":"goes"}`), StatusLegacy, 1, "superseded"},
		{"legacy v2", []byte(`{"schema_version":2}`), StatusLegacy, 2, "superseded"},
		{"legacy v3", []byte(`{"schema_version":3,"owners":[]}`), StatusLegacy, 3, "superseded"},
		{"future v5", []byte(`{"schema_version":5}`), StatusFuture, 5, "newer"},
		{"future v99", []byte(`{"schema_version":99,"x":1}`), StatusFuture, 99, "newer"},
		{"not json", []byte(`<html>`), StatusInvalid, 0, "not a JSON object"},
		{"empty file", []byte{}, StatusInvalid, 0, "not a JSON object"},
		{"json array", []byte(`[1,2]`), StatusInvalid, 0, "not a JSON object"},
		{"no schema_version", []byte(`{"outputs":[]}`), StatusInvalid, 0, "no schema_version"},
		{"string schema_version", []byte(`{"schema_version":"4"}`), StatusInvalid, 0, "not an integer"},
		{"float schema_version", []byte(`{"schema_version":4.5}`), StatusInvalid, 0, "not an integer"},
		{"zero schema_version", []byte(`{"schema_version":0}`), StatusInvalid, 0, "not a known version"},
		{"negative schema_version", []byte(`{"schema_version":-1}`), StatusInvalid, -1, "not a known version"},
		{"v4 missing everything", []byte(`{"schema_version":4}`), StatusInvalid, 4, "created_at: missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := Read(tc.data)
			if st.Status != tc.want {
				t.Fatalf("status %s (%v), want %s", st.Status, st.Problem, tc.want)
			}
			if st.SchemaVersion != tc.version {
				t.Errorf("schema version %d, want %d", st.SchemaVersion, tc.version)
			}
			if tc.problem != "" && (st.Problem == nil || !strings.Contains(st.Problem.Error(), tc.problem)) {
				t.Errorf("problem %v, want it to mention %q", st.Problem, tc.problem)
			}
			if (st.Catalog != nil) != (tc.want == StatusCatalog) {
				t.Errorf("catalog set = %v for status %s", st.Catalog != nil, st.Status)
			}
		})
	}
}

// TestInvalidV4 edits one field of a valid document at a time; each edit must
// make it invalid with a message naming the field.
func TestInvalidV4(t *testing.T) {
	valid, _ := os.ReadFile(filepath.Join("testdata", "full.golden.json"))
	base := string(valid)
	cases := []struct {
		name, old, new, want string
	}{
		{"unknown top-level owners", `"state": {`, `"owners": [], "state": {`, `unknown field "owners"`},
		{"unknown top-level sources", `"state": {`, `"sources": [], "state": {`, `unknown field "sources"`},
		{"top-level workflow", `"state": {`, `"workflow": "additive", "state": {`, `unknown field "workflow"`},
		{"top-level pipeline_id", `"state": {`, `"pipeline_id": "x", "state": {`, `unknown field "pipeline_id"`},
		{"top-level published_at", `"state": {`, `"published_at": "2026-06-04T12:00:00Z", "state": {`, `unknown field "published_at"`},
		{"top-level manifest", `"state": {`, `"manifest": {}, "state": {`, `unknown field "manifest"`},
		{"unknown output field", `"kind": "source"`, `"kind": "source", "owner": "x"`, `unknown field "owner"`},
		{"bad mode", `"mode": "catalog"`, `"mode": "shared_root"`, `state.mode`},
		{"duplicate path", `"path": "assets/chart.png"`, `"path": "report.html"`, `duplicates outputs[0]`},
		{"traversal path", `"path": "assets/chart.png"`, `"path": "../etc/passwd"`, `outputs[0].path`},
		{"absolute path", `"path": "assets/chart.png"`, `"path": "/etc/passwd"`, `outputs[0].path`},
		{"reserved path", `"path": "assets/chart.png"`, `"path": ".distributor.json"`, `reserved`},
		{"backslash path", `"path": "assets/chart.png"`, `"path": "assets\\chart.png"`, `backslash`},
		{"bad pipeline id", `"pipeline_id": "reports",
      "destination_id": "static-site",
      "source": {
        "id": "reports.example.2026-06-04",
        "digest": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "created": "2026-06-04T11:55:00Z"
      },
      "kind": "source"`, `"pipeline_id": "Reports!",
      "destination_id": "static-site",
      "source": {
        "id": "reports.example.2026-06-04",
        "digest": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "created": "2026-06-04T11:55:00Z"
      },
      "kind": "source"`, `outputs[0].pipeline_id`},
		{"bad destination id", `"destination_id": "static-site",
      "source": {
        "id": "reports.example.2026-06-04",
        "digest": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "created": "2026-06-04T11:55:00Z"
      },
      "kind": "source"`, `"destination_id": "",
      "source": {
        "id": "reports.example.2026-06-04",
        "digest": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "created": "2026-06-04T11:55:00Z"
      },
      "kind": "source"`, `outputs[0].destination_id`},
		{"bad sha256", `"sha256": "sha256:1111111111111111111111111111111111111111111111111111111111111111"`, `"sha256": "sha256:ABCD"`, `outputs[0].sha256`},
		{"uppercase sha256", `"sha256": "sha256:abcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcd"`, `"sha256": "sha256:ABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCDEFABCD"`, `outputs[1].sha256`},
		{"bad source digest", `"digest": "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "created": "2026-06-04T11:55:00Z"
      },
      "kind": "source"`, `"digest": "md5:00",
        "created": "2026-06-04T11:55:00Z"
      },
      "kind": "source"`, `outputs[0].source.digest`},
		{"negative size", `"size": 2345`, `"size": -1`, `outputs[1].size`},
		{"missing size", `"size": 0,`, ``, `outputs[0].size: missing`},
		{"bad timestamp", `"updated_at": "2026-06-04T12:10:00Z",
  "state"`, `"updated_at": "yesterday",
  "state"`, `updated_at: "yesterday"`},
		{"source kind with transform", `"kind": "source"`, `"kind": "source", "transform": "markdown_to_html"`, `must not have source_path or transform`},
		{"generated without source_path", `"source_path": "report.md",`, ``, `outputs[1].source_path`},
		{"generated bad transform", `"transform": "markdown_to_html"`, `"transform": "rot13"`, `outputs[1].transform`},
		{"bad kind", `"kind": "source"`, `"kind": "copy"`, `outputs[0].kind`},
		{"ftp url", `"url": "https://reports.example.com/archive/report.html"`, `"url": "ftp://reports.example.com/x"`, `outputs[1].url`},
		{"relative url", `"url": "https://reports.example.com/archive/report.html"`, `"url": "/archive/report.html"`, `outputs[1].url`},
		{"outputs null", `"outputs": [`, `"outputs": null, "x": [`, `unknown field "x"`},
		{"trailing data", "}\n  ]\n}\n", "}\n  ]\n}\n{}", `after top-level value`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.old) {
				t.Fatalf("test bug: %q not in the golden document", tc.old)
			}
			doc := strings.Replace(base, tc.old, tc.new, 1)
			st := Read([]byte(doc))
			if st.Status != StatusInvalid {
				t.Fatalf("status %s, want invalid", st.Status)
			}
			if st.Problem == nil || !strings.Contains(st.Problem.Error(), tc.want) {
				t.Errorf("problem %v\nwant it to contain %q", st.Problem, tc.want)
			}
			// The streaming reader is at least as strict.
			if _, _, err := Scan(strings.NewReader(doc), func(*Output) error { return nil }); err == nil {
				t.Errorf("Scan accepted it")
			}
		})
	}
}

func TestEncodeRejectsInvalid(t *testing.T) {
	c := fullCatalog()
	c.Outputs[0].Path = "../x"
	if _, err := Encode(c); err == nil {
		t.Fatal("Encode accepted an unclean path")
	}
}

func FuzzRead(f *testing.F) {
	valid, _ := os.ReadFile(filepath.Join("testdata", "full.golden.json"))
	f.Add(valid)
	f.Add([]byte(`{"schema_version":3}`))
	f.Add([]byte(`{"schema_version":4,"outputs":null}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st := Read(data)
		if st.Status == StatusCatalog {
			// Anything accepted must encode, and re-read to the same catalog.
			enc, err := Encode(st.Catalog)
			if err != nil {
				t.Fatalf("accepted catalog does not encode: %v", err)
			}
			again := Read(enc)
			if again.Status != StatusCatalog {
				t.Fatalf("re-read of encoded catalog: %s %v", again.Status, again.Problem)
			}
			enc2, err := Encode(again.Catalog)
			if err != nil || !bytes.Equal(enc, enc2) {
				t.Fatalf("encoding is not stable: %v\n%s\n%s", err, enc, enc2)
			}
		}
	})
}

func TestReadRejectsBrokenUnicode(t *testing.T) {
	valid, _ := os.ReadFile(filepath.Join("testdata", "full.golden.json"))
	for name, repl := range map[string]string{
		"invalid UTF-8":       "caf\xe9.html",
		"lone high surrogate": `caf\ud800.html`,
		"lone low surrogate":  `caf\udc00.html`,
		"reversed pair":       `\udc00\ud800.html`,
	} {
		doc := strings.Replace(string(valid), `"path": "report.html"`, `"path": "`+repl+`"`, 1)
		if st := Read([]byte(doc)); st.Status != StatusInvalid {
			t.Errorf("%s: status %s, want invalid", name, st.Status)
		}
	}
	// A proper escaped pair (an emoji) and an escaped backslash sequence are fine.
	doc := strings.Replace(string(valid), `"path": "report.html"`, `"path": "r\ud83d\ude00.html"`, 1)
	if st := Read([]byte(doc)); st.Status != StatusCatalog {
		t.Errorf("escaped surrogate pair: %s %v", st.Status, st.Problem)
	}
	// An escaped backslash followed by "ud800" is not a surrogate escape.
	doc = strings.Replace(string(valid), `"path": "report.html"`, `"path": "a\\\\ud800.html"`, 1)
	if st := Read([]byte(doc)); st.Status != StatusInvalid || !strings.Contains(st.Problem.Error(), "path") {
		// a backslash is not a valid path character: invalid, but for the path rule, not for Unicode
		t.Errorf("escaped backslash: %s %v", st.Status, st.Problem)
	}
}

// wireCatalog is the catalog as encoding/json writes it, the reference of
// Encode's layout.
type wireCatalog struct {
	SchemaVersion      int          `json:"schema_version"`
	DistributorVersion string       `json:"distributor_version,omitempty"`
	CreatedAt          string       `json:"created_at"`
	UpdatedAt          string       `json:"updated_at"`
	State              *wireState   `json:"state"`
	Outputs            []wireOutput `json:"outputs"`
}

// referenceEncode is the straightforward encoding/json rendering of the
// wire types; Encode's hand-written writer must produce the same bytes.
func referenceEncode(t *testing.T, c *Catalog) []byte {
	t.Helper()
	w := wireCatalog{SchemaVersion: 4, DistributorVersion: c.DistributorVersion, CreatedAt: FormatTime(c.CreatedAt),
		UpdatedAt: FormatTime(c.UpdatedAt), State: &wireState{Mode: ModeCatalog}, Outputs: []wireOutput{}}
	for _, o := range c.Outputs {
		size := o.Size
		w.Outputs = append(w.Outputs, wireOutput{Path: o.Path, PipelineID: o.PipelineID, DestinationID: o.DestinationID,
			Source: &wireSource{ID: o.Source.ID, Digest: o.Source.Digest, Created: FormatTime(o.Source.Created)},
			Kind:   o.Kind, SourcePath: o.SourcePath, Transform: o.Transform, URL: o.URL, SHA256: o.SHA256, Size: &size,
			CreatedAt: FormatTime(o.CreatedAt), UpdatedAt: FormatTime(o.UpdatedAt)})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	c := fullCatalog()
	for _, p := range []string{`quote"d.html`, "tab\there", "é ü 漢字.html", "line\u2028sep", "para\u2029sep", "amp&<lt>.html", `back\slash`} {
		o := c.Outputs[0]
		o.Path = p
		o.URL = "https://example.com/" + p
		c.Outputs = append(c.Outputs, o)
	}
	sort.Slice(c.Outputs, func(i, j int) bool { return c.Outputs[i].Path < c.Outputs[j].Path })
	// Encode validates; bypass to compare the writer on strings validation would refuse too.
	got, err := Encode(&Catalog{CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, DistributorVersion: "v1", Outputs: c.Outputs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if want := referenceEncode(t, &Catalog{CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, DistributorVersion: "v1", Outputs: c.Outputs[:1]}); !bytes.Equal(got, want) {
		t.Errorf("Encode differs from encoding/json:\n%s", cmp.Diff(string(want), string(got)))
	}
	for _, s := range []string{`quote"d`, "tab\there", "é ü 漢字", "line\u2028sep", "para\u2029sep", "amp&<lt>", `back\slash`, "ctl\x01\x1f", "bad\xffutf8"} {
		want, _ := json.Marshal(s)
		want = bytes.ReplaceAll(want, []byte(`\u003c`), []byte("<"))
		want = bytes.ReplaceAll(want, []byte(`\u003e`), []byte(">"))
		want = bytes.ReplaceAll(want, []byte(`\u0026`), []byte("&"))
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(%q) = %s, encoding/json %s", s, got, want)
		}
	}
}
