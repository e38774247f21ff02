package bundle

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sumOf returns the manifest form of the SHA-256 of s.
func sumOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return FormatSHA256(h[:])
}

// docSpec describes a manifest document for tests. Raw* fields hold raw JSON
// text; an empty one leaves the member out (use Omit to drop defaults).
type docSpec struct {
	Version string
	ID      string
	Created string
	Digest  string // raw; empty means the correct digest of Files
	Files   []File
	// RawFiles, when non-nil, replaces the files array text entirely.
	RawFiles *string
	Extra    string // raw members appended at the end, e.g. `"x": 1`
	Omit     map[string]bool
}

func defaultSpec() docSpec {
	return docSpec{
		Version: `1`,
		ID:      `"weatherreporter.tomorrow"`,
		Created: `"2026-06-19T12:00:00Z"`,
		Files: []File{
			{Path: "report.md", SHA256: sumOf("report"), Size: 6},
			{Path: "img/a.png", SHA256: sumOf("png"), Size: 3},
		},
	}
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func fileJSON(f File) string {
	return fmt.Sprintf(`{"path": %s, "sha256": %s, "size": %d}`, jsonString(f.Path), jsonString(f.SHA256), f.Size)
}

func (s docSpec) render() string {
	var members []string
	add := func(name, raw string) {
		if raw != "" && !s.Omit[name] {
			members = append(members, fmt.Sprintf("  %q: %s", name, raw))
		}
	}
	add("schema_version", s.Version)
	add("id", s.ID)
	add("created", s.Created)
	digest := s.Digest
	if digest == "" {
		digest = jsonString(ComputeDigest(s.Files))
	}
	add("digest", digest)
	files := ""
	if s.RawFiles != nil {
		files = *s.RawFiles
	} else {
		var objs []string
		for _, f := range s.Files {
			objs = append(objs, "    "+fileJSON(f))
		}
		files = "[\n" + strings.Join(objs, ",\n") + "\n  ]"
	}
	add("files", files)
	if s.Extra != "" {
		members = append(members, "  "+s.Extra)
	}
	return "{\n" + strings.Join(members, ",\n") + "\n}\n"
}

func doc(mut func(*docSpec)) string {
	s := defaultSpec()
	if mut != nil {
		mut(&s)
	}
	return s.render()
}

// withPath replaces the first file's path (computing a matching digest).
func withPath(p string) func(*docSpec) {
	return func(s *docSpec) { s.Files[0].Path = p }
}

// withRawPath makes the first file's path the given raw JSON string text.
func withRawPath(raw string) func(*docSpec) {
	return func(s *docSpec) {
		files := `[{"path": ` + raw + `, "sha256": "` + sumOf("x") + `", "size": 1}]`
		s.RawFiles = &files
	}
}

func rawFiles(text string) func(*docSpec) {
	return func(s *docSpec) { s.RawFiles = &text }
}

// rawA makes the files array one entry for path "a" (sha256 of "a"), with
// the given raw size and extra raw members, and a matching digest.
func rawA(size, extra string) func(*docSpec) {
	return func(s *docSpec) {
		text := `[{"path": "a", "sha256": "` + sumOf("a") + `", "size": ` + size + extra + `}]`
		s.RawFiles = &text
		s.Digest = jsonString(ComputeDigest([]File{{Path: "a", SHA256: sumOf("a")}}))
	}
}

func TestParseManifestValid(t *testing.T) {
	data := doc(func(s *docSpec) { s.Created = `"2026-06-19T14:00:00+02:00"` })
	m, err := ParseManifest([]byte(data))
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	want := &Manifest{
		SchemaVersion: 1,
		ID:            "weatherreporter.tomorrow",
		Created:       time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC),
		Digest:        ComputeDigest(defaultSpec().Files),
		Files: []File{ // sorted by path
			{Path: "img/a.png", SHA256: sumOf("png"), Size: 3},
			{Path: "report.md", SHA256: sumOf("report"), Size: 6},
		},
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("manifest mismatch (-want +got):\n%s", diff)
	}
	if m.Created.Location() != time.UTC {
		t.Errorf("Created location = %v, want UTC", m.Created.Location())
	}
	if f, ok := m.Lookup("report.md"); !ok || f.Size != 6 {
		t.Errorf("Lookup(report.md) = %v, %v", f, ok)
	}
	if _, ok := m.Lookup("nope"); ok {
		t.Errorf("Lookup(nope) found something")
	}
}

func TestParseManifestAcceptsEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		mut  func(*docSpec)
		path string // expected first file's path, if set
	}{
		{name: "id of 128 chars", mut: func(s *docSpec) { s.ID = jsonString("a" + strings.Repeat("-", 127)) }},
		{name: "id of one digit", mut: func(s *docSpec) { s.ID = `"7"` }},
		{name: "fractional seconds", mut: func(s *docSpec) { s.Created = `"2026-06-19T12:00:00.123456789Z"` }},
		{name: "escaped unicode path", mut: func(s *docSpec) {
			files := `[{"path": "\u00e9t\u00e9/\ud83d\ude00.md", "sha256": "` + sumOf("x") + `", "size": 1}]`
			s.RawFiles = &files
			s.Digest = jsonString(ComputeDigest([]File{{Path: "été/😀.md", SHA256: sumOf("x")}}))
		}, path: "été/😀.md"},
		{name: "escaped slash", mut: func(s *docSpec) {
			files := `[{"path": "a\/b", "sha256": "` + sumOf("x") + `", "size": 0}]`
			s.RawFiles = &files
			s.Digest = jsonString(ComputeDigest([]File{{Path: "a/b", SHA256: sumOf("x")}}))
		}, path: "a/b"},
		{name: "nested manifest.json", mut: withPath("sub/manifest.json"), path: "sub/manifest.json"},
		{name: "dot-prefixed name that is not reserved", mut: withPath(".distributo"), path: ".distributo"},
		{name: "path of 1024 bytes", mut: withPath(strings.Repeat("a", 1024))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(doc(tt.mut)))
			if err != nil {
				t.Fatalf("ParseManifest: %v", err)
			}
			if tt.path != "" {
				if _, ok := m.Lookup(tt.path); !ok {
					t.Errorf("path %q not found in %+v", tt.path, m.Files)
				}
			}
		})
	}
}

// manifestErrCase is a manifest ParseManifest must refuse.
type manifestErrCase struct {
	name string
	data string
	want []string // fragments, each must appear in one problem line
	n    int      // expected problem count (0: don't check)
}

// upperSum is sumOf("x") with its hex digits in upper case.
func upperSum() string { return "sha256:" + strings.ToUpper(sumOf("x")[7:]) }

// TestParseManifestErrors runs the cases of each topic in turn: the
// header fields, the digest and the files list, the paths, then sizes,
// hashes, duplicates and the JSON syntax.
func TestParseManifestErrors(t *testing.T) {
	tests := slices.Concat(manifestHeaderErrs(), manifestDigestAndFilesErrs(), manifestPathErrs(), manifestValueAndSyntaxErrs())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tt.data))
			if err == nil {
				t.Fatalf("ParseManifest succeeded (%+v), want error; input:\n%s", m, tt.data)
			}
			if m != nil {
				t.Errorf("ParseManifest returned a manifest along with error %v", err)
			}
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("error %T %v is not a *ManifestError", err, err)
			}
			var lines []string
			for _, p := range me.Problems {
				lines = append(lines, p.String())
			}
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					if strings.Contains(l, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("no problem contains %q; problems:\n  %s", w, strings.Join(lines, "\n  "))
				}
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Error() does not contain %q: %s", w, err)
				}
			}
			if tt.n != 0 && len(me.Problems) != tt.n {
				t.Errorf("got %d problems, want %d:\n  %s", len(me.Problems), tt.n, strings.Join(lines, "\n  "))
			}
			if len(me.Problems) > 1 && strings.Count(err.Error(), "\n") != len(me.Problems) {
				t.Errorf("Error() should list one problem per line:\n%s", err)
			}
		})
	}
}

// manifestHeaderErrs: schema_version, id and created.
func manifestHeaderErrs() []manifestErrCase {
	return []manifestErrCase{
		{name: "schema_version 2", data: doc(func(s *docSpec) { s.Version = "2"; s.Extra = `"future_field": true` }),
			want: []string{"schema_version 2: unsupported schema version"}, n: 1},
		{name: "schema_version 0", data: doc(func(s *docSpec) { s.Version = "0" }),
			want: []string{"schema_version 0: must be 1"}, n: 1},
		{name: "schema_version string", data: doc(func(s *docSpec) { s.Version = `"1"` }),
			want: []string{"schema_version: must be an integer, got a string"}, n: 1},
		{name: "schema_version float", data: doc(func(s *docSpec) { s.Version = `1.0` }),
			want: []string{"schema_version 1.0: must be an integer"}, n: 1},
		{name: "missing schema_version", data: doc(func(s *docSpec) { s.Omit = map[string]bool{"schema_version": true} }),
			want: []string{"schema_version: missing"}, n: 1},
		{name: "missing id", data: doc(func(s *docSpec) { s.Omit = map[string]bool{"id": true} }),
			want: []string{"id: missing"}, n: 1},
		{name: "empty id", data: doc(func(s *docSpec) { s.ID = `""` }),
			want: []string{`id "": is empty`}, n: 1},
		{name: "id null", data: doc(func(s *docSpec) { s.ID = `null` }),
			want: []string{"id: must be a string, got null"}, n: 1},
		{name: "bad id chars", data: doc(func(s *docSpec) { s.ID = `"weather report"` }),
			want: []string{`id "weather report": contains ' '`}, n: 1},
		{name: "id slash", data: doc(func(s *docSpec) { s.ID = `"a/b"` }),
			want: []string{`id "a/b": contains '/'`}, n: 1},
		{name: "id starts with dot", data: doc(func(s *docSpec) { s.ID = `".hidden"` }),
			want: []string{`id ".hidden": must start with a letter or a digit`}, n: 1},
		{name: "id too long", data: doc(func(s *docSpec) { s.ID = jsonString(strings.Repeat("a", 129)) }),
			want: []string{"id \"aaaa", "is 129 characters long, at most 128 allowed"}, n: 1},
		{name: "id non-ASCII", data: doc(func(s *docSpec) { s.ID = `"caf\u00e9"` }),
			want: []string{`id "café": contains 'é'`}, n: 1},
		{name: "bad created", data: doc(func(s *docSpec) { s.Created = `"2026-06-19 12:00:00"` }),
			want: []string{`created "2026-06-19 12:00:00": is not an RFC 3339 timestamp`}, n: 1},
		{name: "created without zone", data: doc(func(s *docSpec) { s.Created = `"2026-06-19T12:00:00"` }),
			want: []string{`created "2026-06-19T12:00:00": is not an RFC 3339 timestamp`}, n: 1},
		{name: "created month 13", data: doc(func(s *docSpec) { s.Created = `"2026-13-19T12:00:00Z"` }),
			want: []string{`created "2026-13-19T12:00:00Z": is not an RFC 3339`}, n: 1},
		{name: "created with comma", data: doc(func(s *docSpec) { s.Created = `"2026-06-19T12:00:00,5Z"` }),
			want: []string{`created "2026-06-19T12:00:00,5Z": is not an RFC 3339`}, n: 1},
		{name: "created with 24h offset", data: doc(func(s *docSpec) { s.Created = `"2026-06-19T12:00:00+24:00"` }),
			want: []string{`created "2026-06-19T12:00:00+24:00": is not an RFC 3339`}, n: 1},
		{name: "created zero", data: doc(func(s *docSpec) { s.Created = `"0001-01-01T00:00:00Z"` }),
			want: []string{`created: missing (or the zero time`}, n: 1},
		{name: "created number", data: doc(func(s *docSpec) { s.Created = `1750000000` }),
			want: []string{"created: must be a string, got a number"}, n: 1},
		{name: "missing created", data: doc(func(s *docSpec) { s.Omit = map[string]bool{"created": true} }),
			want: []string{"created: missing"}, n: 1},
	}
}

// manifestDigestAndFilesErrs: the digest, the files list, unknown fields and
// file entries without their members.
func manifestDigestAndFilesErrs() []manifestErrCase {
	upper := upperSum()
	return []manifestErrCase{
		{name: "digest wrong algorithm", data: doc(func(s *docSpec) { s.Digest = `"md5:d41d8cd98f00b204e9800998ecf8427e"` }),
			want: []string{`digest "md5:d41d8cd98f00b204e9800998ecf8427e": must start with "sha256:"`}, n: 1},
		{name: "digest short", data: doc(func(s *docSpec) { s.Digest = `"sha256:abc"` }),
			want: []string{`digest "sha256:abc": must have 64 hex digits`}, n: 1},
		{name: "digest uppercase", data: doc(func(s *docSpec) { s.Digest = jsonString(upper) }),
			want: []string{"digest \"sha256:", "must use lowercase hex digits"}, n: 1},
		{name: "digest non-hex", data: doc(func(s *docSpec) { s.Digest = jsonString("sha256:" + strings.Repeat("g", 64)) }),
			want: []string{"has a non-hex character 'g'"}, n: 1},
		{name: "digest mismatch", data: doc(func(s *docSpec) { s.Digest = jsonString(sumOf("other")) }),
			want: []string{`digest "` + sumOf("other") + `": does not match the listed files (computed ` + ComputeDigest(defaultSpec().Files) + ")"}, n: 1},
		{name: "missing digest", data: doc(func(s *docSpec) { s.Omit = map[string]bool{"digest": true} }),
			want: []string{"digest: missing"}, n: 1},
		{name: "empty files", data: doc(rawFiles(`[]`)),
			want: []string{"files: must list at least one file"}},
		{name: "files null", data: doc(rawFiles(`null`)),
			want: []string{"files: must be an array, got null"}, n: 1},
		{name: "files object", data: doc(rawFiles(`{"path": "a"}`)),
			want: []string{"files: must be an array, got an object"}, n: 1},
		{name: "missing files", data: doc(func(s *docSpec) { s.Omit = map[string]bool{"files": true} }),
			want: []string{"files: missing"}, n: 1},
		{name: "unknown top-level field", data: doc(func(s *docSpec) { s.Extra = `"comment": {"nested": [1, 2]}` }),
			want: []string{`unknown field "comment"`}, n: 1},
		{name: "field names are case-sensitive", data: doc(func(s *docSpec) { s.Omit = map[string]bool{"id": true}; s.Extra = `"ID": "x"` }),
			want: []string{`unknown field "ID"`, "id: missing"}, n: 2},
		{name: "unknown file field", data: doc(rawA("1", `, "mode": 420`)),
			want: []string{`files[0]: unknown field "mode"`}, n: 1},
		{name: "file entry not an object", data: doc(rawFiles(`["a.md"]`)),
			want: []string{"files[0]: must be an object, got a string"}, n: 1},
		{name: "file missing path", data: doc(rawFiles(`[{"sha256": "` + sumOf("a") + `", "size": 1}]`)),
			want: []string{"files[0].path: missing"}, n: 1},
		{name: "file missing sha256 and size", data: doc(rawFiles(`[{"path": "a"}]`)),
			want: []string{"files[0].sha256: missing", "files[0].size: missing"}, n: 2},
	}
}

// manifestPathErrs: file paths that must be refused.
func manifestPathErrs() []manifestErrCase {
	return []manifestErrCase{
		{name: "traversal", data: doc(withPath("../x")),
			want: []string{`files[0].path "../x": has a ".." segment`}, n: 1},
		{name: "inner traversal", data: doc(withPath("a/../b")),
			want: []string{`files[0].path "a/../b": has a ".." segment`}, n: 1},
		{name: "dot segment", data: doc(withPath("./a")),
			want: []string{`files[0].path "./a": has a "." segment`}, n: 1},
		{name: "absolute", data: doc(withPath("/etc/passwd")),
			want: []string{`files[0].path "/etc/passwd": is absolute`}, n: 1},
		{name: "backslash", data: doc(withPath(`a\b`)),
			want: []string{`files[0].path "a\\b": contains a backslash`}, n: 1},
		{name: "NUL", data: doc(withRawPath(`"a\u0000b"`)),
			want: []string{`files[0].path "a\x00b": contains control character U+0000`}, n: 1},
		{name: "control char", data: doc(withPath("a\x1fb")),
			want: []string{`files[0].path "a\x1fb": contains control character U+001F`}, n: 1},
		{name: "C1 control char", data: doc(withPath("a\u0085b")),
			want: []string{`files[0].path "a\u0085b": contains control character U+0085`}, n: 1},
		{name: "invalid UTF-8", data: doc(withRawPath("\"a\xffb\"")),
			want: []string{`files[0].path "a\xffb": is not valid UTF-8`}, n: 1},
		{name: "unpaired surrogate escape", data: doc(withRawPath(`"a\ud800b"`)),
			want: []string{`files[0].path "a\ud800b": has an unpaired escaped UTF-16 surrogate \ud800`}, n: 1},
		{name: "empty segment", data: doc(withPath("a//b")),
			want: []string{`files[0].path "a//b": has an empty segment`}, n: 1},
		{name: "trailing slash", data: doc(withPath("a/")),
			want: []string{`files[0].path "a/": ends with /`}, n: 1},
		{name: "empty path", data: doc(withPath("")),
			want: []string{`files[0].path "": is empty`}, n: 1},
		{name: "path too long", data: doc(withPath(strings.Repeat("a", 1025))),
			want: []string{`files[0].path "aaa`, "…(1025 bytes): is longer than 1024 bytes"}, n: 1},
		{name: "duplicate paths", data: doc(func(s *docSpec) { s.Files[1].Path = s.Files[0].Path }),
			want: []string{`files[1].path "report.md": duplicate of files[0].path`}, n: 1},
		{name: "reserved catalog name", data: doc(withPath(".distributor.json")),
			want: []string{`files[0].path ".distributor.json": has a segment starting with ".distributor"`}, n: 1},
		{name: "reserved nested segment", data: doc(withPath("x/.distributorfoo")),
			want: []string{`files[0].path "x/.distributorfoo": has a segment starting with ".distributor"`}, n: 1},
		{name: "lists manifest.json", data: doc(withPath("manifest.json")),
			want: []string{`files[0].path "manifest.json": is the manifest itself`}, n: 1},
		{name: "file and its parent", data: doc(func(s *docSpec) { s.Files[0].Path = "img" }),
			want: []string{`files[1].path "img/a.png": its parent "img" is listed as a file (files[0])`}, n: 1},
	}
}

// manifestValueAndSyntaxErrs: sizes, file hashes, duplicate keys, invalid
// JSON, and all problems reported together.
func manifestValueAndSyntaxErrs() []manifestErrCase {
	upper := upperSum()
	return []manifestErrCase{
		{name: "negative size", data: doc(func(s *docSpec) { s.Files[1].Size = -1 }),
			want: []string{"files[1].size -1: must not be negative"}, n: 1},
		{name: "fractional size", data: doc(rawA("1.5", "")),
			want: []string{"files[0].size 1.5: must be an integer"}, n: 1},
		{name: "huge size", data: doc(rawA("99999999999999999999", "")),
			want: []string{"files[0].size 99999999999999999999: is out of range"}, n: 1},
		{name: "size string", data: doc(rawA(`"1"`, "")),
			want: []string{"files[0].size: must be an integer, got a string"}, n: 1},
		{name: "uppercase file hash", data: doc(func(s *docSpec) { s.Files[0].SHA256 = upper }),
			want: []string{`files[0].sha256 "` + upper + `": must use lowercase hex digits`}, n: 1},
		{name: "file hash without prefix", data: doc(func(s *docSpec) { s.Files[0].SHA256 = sumOf("x")[7:] }),
			want: []string{`files[0].sha256 "` + sumOf("x")[7:] + `": must start with "sha256:"`}, n: 1},
		{name: "duplicate key", data: doc(func(s *docSpec) { s.Extra = `"id": "again"` }),
			want: []string{"id: duplicate field"}, n: 1},
		{name: "duplicate file key", data: doc(rawFiles(`[{"path": "a", "path": "b", "sha256": "` + sumOf("a") + `", "size": 1}]`)),
			want: []string{"files[0].path: duplicate field"}, n: 1},
		{name: "trailing object", data: doc(nil) + `{}`,
			want: []string{"invalid JSON at line 11, column 1: unexpected data after top-level value"}, n: 1},
		{name: "trailing garbage", data: doc(nil) + "  x",
			want: []string{"invalid JSON at line 11, column 3: unexpected data after top-level value"}, n: 1},
		{name: "truncated", data: doc(nil)[:40],
			want: []string{"id: invalid JSON at line 3, column 16: unexpected end of input"}, n: 1},
		{name: "syntax error", data: "{\n  \"id\" 1}",
			want: []string{`id: invalid JSON at line 2, column 8: invalid character '1' after object name`}, n: 1},
		{name: "trailing comma", data: strings.Replace(doc(nil), "\n}", ",\n}", 1),
			want: []string{"invalid JSON at line 9, column 4: invalid character ','"}, n: 1},
		{name: "empty input", data: " \n", want: []string{"document is empty"}, n: 1},
		{name: "top-level array", data: `[]`, want: []string{"document must be a JSON object, got an array"}, n: 1},
		{name: "all problems together", data: doc(func(s *docSpec) {
			s.ID = `"bad id"`
			s.Created = `"yesterday"`
			s.Files[0].Path = "../up"
			s.Files[1].Size = -5
			s.Extra = `"extra": 1`
		}), want: []string{
			`id "bad id": contains ' '`,
			`created "yesterday": is not an RFC 3339 timestamp`,
			`files[0].path "../up": has a ".." segment`,
			"files[1].size -5: must not be negative",
			`unknown field "extra"`,
		}, n: 5},
	}
}

func TestCheckSHA256(t *testing.T) {
	good := sumOf("x")
	if err := CheckSHA256(good); err != nil {
		t.Errorf("CheckSHA256(%q) = %v", good, err)
	}
	for _, bad := range []string{"", "sha256:", good[7:], good + "0", good[:70], "SHA256:" + good[7:], good[:10] + "A" + good[11:]} {
		if err := CheckSHA256(bad); err == nil {
			t.Errorf("CheckSHA256(%q) = nil, want error", bad)
		}
	}
}

func TestEncodeManifestGolden(t *testing.T) {
	m := &Manifest{
		SchemaVersion: 1,
		ID:            "weatherreporter.tomorrow",
		Created:       time.Date(2026, 6, 19, 14, 0, 0, 0, time.FixedZone("CEST", 2*3600)),
		Files: []File{ // unsorted on purpose
			{Path: "report.md", SHA256: sumOf("report"), Size: 6},
			{Path: "a<b>&c.md", SHA256: sumOf("png"), Size: 3},
		},
	}
	m.Digest = ComputeDigest(m.Files)
	got, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "schema_version": 1,
  "id": "weatherreporter.tomorrow",
  "created": "2026-06-19T12:00:00Z",
  "digest": "` + m.Digest + `",
  "files": [
    {
      "path": "a<b>&c.md",
      "sha256": "` + sumOf("png") + `",
      "size": 3
    },
    {
      "path": "report.md",
      "sha256": "` + sumOf("report") + `",
      "size": 6
    }
  ]
}
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("encoding mismatch (-want +got):\n%s", diff)
	}
	if m.Files[0].Path != "report.md" {
		t.Errorf("EncodeManifest reordered the caller's Files")
	}
	back, err := ParseManifest(got)
	if err != nil {
		t.Fatalf("ParseManifest(EncodeManifest(m)): %v", err)
	}
	if back.ID != m.ID || !back.Created.Equal(m.Created) || len(back.Files) != 2 {
		t.Errorf("round trip changed the manifest: %+v", back)
	}
}

func TestEncodeManifestRefusesInvalid(t *testing.T) {
	m := &Manifest{SchemaVersion: 1, ID: "-bad", Created: time.Now(), Files: []File{{Path: "a", SHA256: sumOf("a")}}}
	m.Digest = ComputeDigest(m.Files)
	_, err := EncodeManifest(m)
	var me *ManifestError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), `id "-bad": must start with a letter or a digit`) {
		t.Fatalf("EncodeManifest error = %v, want a *ManifestError about the id", err)
	}
}

func TestComputeDigestOrder(t *testing.T) {
	a := []File{{Path: "b", SHA256: sumOf("1")}, {Path: "a", SHA256: sumOf("2")}}
	b := []File{{Path: "a", SHA256: sumOf("2")}, {Path: "b", SHA256: sumOf("1")}}
	if ComputeDigest(a) != ComputeDigest(b) {
		t.Errorf("digest depends on input order")
	}
	if a[0].Path != "b" {
		t.Errorf("ComputeDigest sorted its argument")
	}
	text := sumOf("2")[7:] + "  a\n" + sumOf("1")[7:] + "  b\n"
	if got, want := ComputeDigest(a), sumOf(text); got != want {
		t.Errorf("ComputeDigest = %s, want %s", got, want)
	}
}

// TestParseManifestStrictJSON: each rule of the strict JSON reader, on the
// manifest, with the exact problem reported. A problem with the JSON text
// itself is reported alone.
func TestParseManifestStrictJSON(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // the whole problem line
	}{
		{name: "invalid UTF-8 in a value", data: doc(withRawPath("\"a\xffb\"")),
			want: `files[0].path "a\xffb": is not valid UTF-8`},
		{name: "invalid UTF-8 in a member name", data: doc(func(s *docSpec) { s.Extra = "\"n\xffte\": 1" }),
			want: `has a member name "n\xffte" that is not valid UTF-8`},
		{name: "invalid UTF-8 in an unknown member's value", data: doc(func(s *docSpec) { s.Extra = "\"note\": [\"\xc3\"]" }),
			want: `note[0] "\xc3": is not valid UTF-8`},
		{name: "lone high surrogate", data: doc(func(s *docSpec) { s.ID = `"a\ud83d"` }),
			want: `id "a\ud83d": has an unpaired escaped UTF-16 surrogate \ud83d (not a character)`},
		{name: "lone low surrogate", data: doc(withRawPath(`"\ude00.md"`)),
			want: `files[0].path "\ude00.md": has an unpaired escaped UTF-16 surrogate \ude00 (not a character)`},
		{name: "surrogate pair in the wrong order", data: doc(withRawPath(`"\ude00\ud83d"`)),
			want: `files[0].path "\ude00\ud83d": has an unpaired escaped UTF-16 surrogate \ude00 (not a character)`},
		{name: "duplicate top-level member", data: doc(func(s *docSpec) { s.Extra = `"digest": "x"` }),
			want: `digest: duplicate field`},
		{name: "duplicate member spelled with an escape", data: doc(func(s *docSpec) { s.Extra = `"\u0069d": "x"` }),
			want: `id: duplicate field`},
		{name: "duplicate member of a file", data: doc(rawA("1", `, "size": 2`)),
			want: `files[0].size: duplicate field`},
		{name: "duplicate member inside an unknown member", data: doc(func(s *docSpec) { s.Extra = `"x": {"a": 1, "a": 2}` }),
			want: `x.a: duplicate field`},
		{name: "trailing object", data: doc(nil) + "{}",
			want: `invalid JSON at line 11, column 1: unexpected data after top-level value`},
		{name: "trailing second manifest", data: doc(nil) + doc(nil),
			want: `invalid JSON at line 11, column 1: unexpected data after top-level value`},
		{name: "trailing garbage after white space", data: doc(nil) + "\n\t,",
			want: `invalid JSON at line 12, column 2: unexpected data after top-level value`},
		{name: "unknown top-level member", data: doc(func(s *docSpec) { s.Extra = `"signature": "x"` }),
			want: `unknown field "signature"`},
		{name: "unknown member of a file", data: doc(rawA("1", `, "mtime": 0`)),
			want: `files[0]: unknown field "mtime"`},
		{name: "member name in another case", data: doc(func(s *docSpec) { s.Omit = map[string]bool{"files": true}; s.Extra = `"Files": []` }),
			want: `unknown field "Files"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tt.data))
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Fatalf("ParseManifest error = %v, want a *ManifestError", err)
			}
			for _, p := range me.Problems {
				if p.String() == tt.want {
					return
				}
			}
			t.Errorf("no problem is %q; got:\n%v", tt.want, err)
		})
	}
}

// TestParseManifestFastPath: the one-pass parser accepts valid manifests
// with exactly the thorough parser's result (referenceParseManifest, the
// parser it replaced), and names the same problems on anything else.
func TestParseManifestFastPath(t *testing.T) {
	valid := []string{
		doc(nil),
		doc(func(s *docSpec) { s.Created = `"2026-06-19T14:00:00.5+02:00"` }),
		doc(rawA("1", "")),
		doc(withPath("sub/manifest.json")),
		doc(func(s *docSpec) { s.ID = `"\u0077eather"` }),
	}
	for _, data := range valid {
		fast, err := ParseManifest([]byte(data))
		if err != nil {
			t.Errorf("ParseManifest refused a valid manifest (%v):\n%s", err, data)
			continue
		}
		slow, err := referenceParseManifest([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(slow, fast); diff != "" {
			t.Errorf("fast and thorough parses differ (-thorough +fast):\n%s", diff)
		}
	}
	invalid := map[string]string{
		"size as a float":             doc(rawA("1.0", "")),
		"size with an exponent":       doc(rawA("1e0", "")),
		"negative size":               doc(rawA("-1", "")),
		"size as a string":            doc(rawA(`"1"`, "")),
		"duplicate member":            doc(rawA("1", `, "size": 1`)),
		"unknown file member":         doc(rawA("1", `, "mtime": 0`)),
		"unknown member":              doc(func(s *docSpec) { s.Extra = `"signature": "x"` }),
		"lone surrogate":              doc(func(s *docSpec) { s.ID = `"a\ud83d"` }),
		"invalid UTF-8":               doc(withRawPath("\"a\xffb\"")),
		"trailing data":               doc(nil) + "{}",
		"schema version 2":            doc(func(s *docSpec) { s.Version = "2" }),
		"digest mismatch":             doc(func(s *docSpec) { s.Digest = jsonString(sumOf("nope")) }),
		"missing files":               doc(func(s *docSpec) { s.Omit = map[string]bool{"files": true} }),
		"unclean path":                doc(withPath("a/../b")),
		"created not RFC 3339":        doc(func(s *docSpec) { s.Created = `"2026-06-19 12:00:00"` }),
		"files not an array":          doc(rawFiles(`{}`)),
		"empty files":                 doc(rawFiles(`[]`)),
		"member name in another case": doc(func(s *docSpec) { s.Omit = map[string]bool{"files": true}; s.Extra = `"Files": []` }),
	}
	for name, data := range invalid {
		_, want := referenceParseManifest([]byte(data))
		_, err := ParseManifest([]byte(data))
		if err == nil {
			t.Errorf("%s: ParseManifest accepted:\n%s", name, data)
		} else if err.Error() != want.Error() {
			t.Errorf("%s: ParseManifest says\n%v\nthe thorough parser\n%v", name, err, want)
		}
	}
}

// BenchmarkParseManifest parses the manifest of a 2,000-file bundle (the
// no-op benchmark's size), through ParseManifest (one pass) and through
// the thorough parser it replaced (referenceParseManifest).
func BenchmarkParseManifest(b *testing.B) {
	files := make([]File, 2000)
	for i := range files {
		files[i] = File{Path: fmt.Sprintf("d%03d/f%05d.bin", i/100, i), SHA256: sumOf(fmt.Sprint(i)), Size: 100000}
	}
	m := &Manifest{SchemaVersion: 1, ID: "bench", Created: time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC), Digest: ComputeDigest(files), Files: files}
	data, err := EncodeManifest(m)
	if err != nil {
		b.Fatal(err)
	}
	for name, parse := range map[string]func([]byte) (*Manifest, error){"fast": ParseManifest, "thorough": referenceParseManifest} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parse(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
