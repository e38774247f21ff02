package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/distributor-dev/distributor/internal/cli"
)

// Hostile input is refused with an error that names the problem, and
// nothing is written: every case snapshots the whole workspace (config,
// bundle, destination root and the files around them) before the command
// and compares it after, byte for byte, mtimes included.
//
// Bundle and configuration cases run twice: against a root that does not
// exist (it must still not exist afterwards) and against a realistic managed
// root that a good bundle was published to first (then the good bundle is
// changed, so that a run that got past validation would write). Catalog
// cases damage the catalog of a managed root.

// hostileKind says which input is hostile; it decides the commands run and
// the exit status they must give.
type hostileKind int

const (
	badBundle  hostileKind = iota // exit 1: "a bundle is invalid"
	badConfig                     // exit 2: "a usage or configuration error"
	badCatalog                    // exit 1: fail_conflict on the damaged root
)

type hostileCase struct {
	name  string
	kind  hostileKind
	setup func(t *testing.T, w *hostileWS)
	// want are fragments that must all appear in the command's output
	// (stdout and stderr; JSON string values for --output json).
	want []string
	// bug, when set, describes a product bug that makes the case fail: it
	// is skipped until the bug is fixed.
	bug string
}

// hostileConfig publishes bundle to www/daily/ with a rename, so that prefix
// and rename can be made hostile; retention lets prune run.
const hostileConfig = `pipelines:
  - id: reports
    source: bundle
    destinations: [site]
destinations:
  - id: site
    backend: local
    path: www
    workflow: additive
    paths:
      prefix: daily/
      rename: {report.md: index.md}
    links:
      base_url: https://reports.example.com/
    retention:
      prune:
        older_than: 1d
`

// hostileBundle is the good bundle: the files and the manifest fields.
var hostileBundle = map[string]string{
	"report.md":      "# Daily report\n\nAll quiet. See [notes](notes.txt).\n",
	"notes.txt":      "plain notes\n",
	"data/chart.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"></svg>` + "\n",
}

const (
	hostileID      = "reports.daily"
	hostileCreated = "2026-06-19T12:00:00Z"
)

// hostileWS is one workspace: everything under dir is snapshotted.
type hostileWS struct {
	dir    string
	conf   string // dir/distributor.yaml
	bundle string // dir/bundle
	root   string // dir/www: the destination root
}

func newHostileWS(t *testing.T, managed bool) *hostileWS {
	t.Helper()
	// The real path, so that it can be cut out of outputs (the temporary
	// directory is named after the test, which would match fragments).
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &hostileWS{dir: dir, conf: filepath.Join(dir, "distributor.yaml"), bundle: filepath.Join(dir, "bundle"), root: filepath.Join(dir, "www")}
	w.write(t, "distributor.yaml", hostileConfig)
	for p, c := range hostileBundle {
		w.write(t, "bundle/"+p, c)
	}
	w.manifest(t, manifestDoc{files: w.files(t)})
	if !managed {
		return w
	}
	// Publish the good bundle, plus an unmanaged file, like a real root.
	w.write(t, "www/robots.txt", "User-agent: *\n")
	if code, out := hostileExec(t, "run", "--config", w.conf); code != 0 {
		t.Fatalf("publishing the good bundle: exit %d\n%s", code, out)
	}
	for _, p := range []string{".distributor.json", "daily/index.html", "daily/notes.txt", "daily/data/chart.svg"} {
		if _, err := os.Lstat(filepath.Join(w.root, p)); err != nil {
			t.Fatalf("after the first publish: %v", err)
		}
	}
	if _, err := os.Lstat(filepath.Join(w.root, ".distributor.lock")); err == nil {
		t.Fatal("after the first publish: .distributor.lock is left behind")
	}
	// A new version of the report: a run that got past validation would
	// write it.
	w.write(t, "bundle/report.md", "# Daily report\n\nA storm is coming.\n")
	w.manifest(t, manifestDoc{files: w.files(t)})
	return w
}

// write writes a file below the workspace, creating its parents.
func (w *hostileWS) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// symlink replaces rel (below the workspace) by a symlink to target.
func (w *hostileWS) symlink(t *testing.T, target, rel string) {
	t.Helper()
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// entry describes the bundle file p as it is on disk (through symlinks).
func (w *hostileWS) entry(t *testing.T, p string) mfile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.bundle, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return mfile{path: p, sha: sha256Of(string(b)), size: int64(len(b))}
}

// files describes the good bundle files, sorted by path.
func (w *hostileWS) files(t *testing.T) []mfile {
	t.Helper()
	var out []mfile
	for _, p := range slices.Sorted(maps.Keys(hostileBundle)) {
		out = append(out, w.entry(t, p))
	}
	return out
}

func (w *hostileWS) manifest(t *testing.T, m manifestDoc) {
	t.Helper()
	w.write(t, "bundle/manifest.json", m.String())
}

// catalogDoc returns the root's catalog decoded as generic JSON.
func (w *hostileWS) catalogDoc(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.root, ".distributor.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// editCatalog rewrites the root's catalog after edit changes its JSON.
func (w *hostileWS) editCatalog(t *testing.T, edit func(doc map[string]any)) {
	t.Helper()
	doc := w.catalogDoc(t)
	edit(doc)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	w.write(t, "www/.distributor.json", string(b)+"\n")
}

// editOutput changes the first output record of the root's catalog.
func (w *hostileWS) editOutput(t *testing.T, edit func(o map[string]any)) {
	t.Helper()
	w.editCatalog(t, func(doc map[string]any) {
		outs := doc["outputs"].([]any)
		edit(outs[0].(map[string]any))
	})
}

// editConfig replaces old by new in the good configuration; old must occur.
func (w *hostileWS) editConfig(t *testing.T, old, new string) {
	t.Helper()
	if !strings.Contains(hostileConfig, old) {
		t.Fatalf("the configuration has no %q", old)
	}
	w.write(t, "distributor.yaml", strings.Replace(hostileConfig, old, new, 1))
}

func sha256Of(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// mfile is one manifest entry.
type mfile struct {
	path string // Go string; encoded by jsonString (invalid UTF-8 stays raw)
	sha  string
	size int64
	raw  string // when set: the entry's JSON, verbatim (left out of the digest)
}

// manifestDoc builds a manifest by hand, so that it can lie. Raw fields are
// JSON text, verbatim; empty ones get the good value.
type manifestDoc struct {
	schema, id, created string
	digest              string // JSON; "" = computed from files
	files               []mfile
	rawFiles            string // JSON of the files value, verbatim
	extra               string // more members, verbatim
	trailer             string // bytes after the closing brace
}

func (m manifestDoc) String() string {
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	digest := m.digest
	if digest == "" {
		digest = jsonString(hostileDigest(m.files))
	}
	files := m.rawFiles
	if files == "" {
		var entries []string
		for _, f := range m.files {
			if f.raw != "" {
				entries = append(entries, f.raw)
				continue
			}
			entries = append(entries, fmt.Sprintf(`{"path": %s, "sha256": %s, "size": %d}`, jsonString(f.path), jsonString(f.sha), f.size))
		}
		files = "[\n    " + strings.Join(entries, ",\n    ") + "\n  ]"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"schema_version\": %s,\n", or(m.schema, "1"))
	fmt.Fprintf(&b, "  \"id\": %s,\n", or(m.id, jsonString(hostileID)))
	fmt.Fprintf(&b, "  \"created\": %s,\n", or(m.created, jsonString(hostileCreated)))
	fmt.Fprintf(&b, "  \"digest\": %s,\n", digest)
	fmt.Fprintf(&b, "  \"files\": %s", files)
	if m.extra != "" {
		fmt.Fprintf(&b, ",\n  %s", m.extra)
	}
	b.WriteString("\n}\n")
	b.WriteString(m.trailer)
	return b.String()
}

// hostileDigest computes the manifest digest of the entries, as sha256sum
// would: "<hex>  <path>\n" lines sorted by path.
func hostileDigest(files []mfile) string {
	var sorted []mfile
	for _, f := range files {
		if f.raw == "" {
			sorted = append(sorted, f)
		}
	}
	slices.SortStableFunc(sorted, func(a, b mfile) int { return strings.Compare(a.path, b.path) })
	var lines strings.Builder
	for _, f := range sorted {
		lines.WriteString(strings.TrimPrefix(f.sha, "sha256:") + "  " + f.path + "\n")
	}
	return sha256Of(lines.String())
}

// jsonString quotes s as a JSON string, escaping control characters and
// leaving invalid UTF-8 bytes raw (encoding/json would replace them).
func jsonString(s string) string {
	b := []byte{'"'}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, s[i])
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case unicode.IsControl(r):
			b = fmt.Appendf(b, `\u%04x`, r)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(append(b, '"'))
}

// withEntry is a bundle setup: the good files plus the given entries.
func withEntry(extra ...mfile) func(*testing.T, *hostileWS) {
	return func(t *testing.T, w *hostileWS) {
		w.manifest(t, manifestDoc{files: append(w.files(t), extra...)})
	}
}

// badPath lists one more file under an unclean or reserved path, with the
// hash and size of "x\n" (the path rule alone must refuse it).
func badPath(p string) func(*testing.T, *hostileWS) {
	return withEntry(mfile{path: p, sha: sha256Of("x\n"), size: 2})
}

// withDoc is a bundle setup: the good files with some fields changed.
func withDoc(edit func(m *manifestDoc)) func(*testing.T, *hostileWS) {
	return func(t *testing.T, w *hostileWS) {
		m := manifestDoc{files: w.files(t)}
		edit(&m)
		w.manifest(t, m)
	}
}

// editEntry is a bundle setup: the good files with the one at path changed.
func editEntry(path string, edit func(f *mfile)) func(*testing.T, *hostileWS) {
	return func(t *testing.T, w *hostileWS) {
		files := w.files(t)
		for i := range files {
			if files[i].path == path {
				edit(&files[i])
			}
		}
		w.manifest(t, manifestDoc{files: files})
	}
}

// configEdit is a config setup replacing old by new.
func configEdit(old, new string) func(*testing.T, *hostileWS) {
	return func(t *testing.T, w *hostileWS) { w.editConfig(t, old, new) }
}

// configText is a config setup writing the whole file.
func configText(s string) func(*testing.T, *hostileWS) {
	return func(t *testing.T, w *hostileWS) { w.write(t, "distributor.yaml", s) }
}

// catalogText is a catalog setup writing the whole file.
func catalogText(s string) func(*testing.T, *hostileWS) {
	return func(t *testing.T, w *hostileWS) { w.write(t, "www/.distributor.json", s) }
}

func outputEdit(edit func(o map[string]any)) func(*testing.T, *hostileWS) {
	return func(t *testing.T, w *hostileWS) { w.editOutput(t, edit) }
}

// spliceRecord adds a record for path (a copy of the first one) to the
// root's catalog. path is spliced in as raw JSON string content, so it can
// hold what encoding/json cannot write: invalid UTF-8, unpaired surrogates.
func spliceRecord(path string) func(*testing.T, *hostileWS) {
	return func(t *testing.T, w *hostileWS) {
		const marker = "zz-splice-marker.html" // sorts last: outputs[3]
		w.editCatalog(t, func(doc map[string]any) {
			outs := doc["outputs"].([]any)
			rec := map[string]any{}
			for k, v := range outs[0].(map[string]any) {
				rec[k] = v
			}
			rec["path"] = marker
			doc["outputs"] = append(outs, rec)
		})
		b, err := os.ReadFile(filepath.Join(w.root, ".distributor.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(marker)) {
			t.Fatal("no marker in the catalog")
		}
		w.write(t, "www/.distributor.json", strings.Replace(string(b), marker, path, 1))
	}
}

// nested returns a JSON (or YAML flow) value nested depth arrays deep.
func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// billionLaughs is a YAML alias bomb: 10 levels of 10 references, 10^10
// nodes if expanded, used as the destinations of a pipeline.
func billionLaughs() string {
	var b strings.Builder
	b.WriteString("pipelines:\n  - id: reports\n    source: bundle\n    destinations:\n")
	b.WriteString("      - &l0 [site, site, site, site, site, site, site, site, site, site]\n")
	for i := 1; i < 10; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "      - &l%d [%s]\n", i, refs)
	}
	b.WriteString("destinations:\n  - id: site\n    backend: local\n    path: www\n")
	return b.String()
}

// bug marks a case as failing because of a product bug.
func bug(c hostileCase, why string) hostileCase {
	c.bug = why
	return c
}

// mergeBomb is an alias bomb through merge keys: 10 pipelines each merging
// the previous one 10 times.
func mergeBomb() string {
	var b strings.Builder
	b.WriteString("pipelines:\n  - &p0\n    id: reports\n    source: bundle\n    destinations: [site]\n")
	for i := 1; i < 10; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*p%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "  - &p%d\n    <<: [%s]\n", i, refs)
	}
	b.WriteString("destinations:\n  - id: site\n    backend: local\n    path: www\n")
	return b.String()
}

func hostileCases() []hostileCase {
	bc := func(name string, setup func(*testing.T, *hostileWS), want ...string) hostileCase {
		return hostileCase{name: "bundle/" + name, kind: badBundle, setup: setup, want: append([]string{"manifest.json"}, want...)}
	}
	// bf is a problem with one listed file rather than the manifest.
	bf := func(name string, setup func(*testing.T, *hostileWS), want ...string) hostileCase {
		return hostileCase{name: "bundle/" + name, kind: badBundle, setup: setup, want: want}
	}
	cc := func(name string, setup func(*testing.T, *hostileWS), want ...string) hostileCase {
		return hostileCase{name: "config/" + name, kind: badConfig, setup: setup, want: append([]string{"distributor.yaml"}, want...)}
	}
	sc := func(name string, setup func(*testing.T, *hostileWS), want ...string) hostileCase {
		return hostileCase{name: "catalog/" + name, kind: badCatalog, setup: setup, want: want}
	}
	deep := strings.Repeat("abcd/", 300) + "x.txt" // 300 segments, 1505 bytes
	return []hostileCase{
		// ---- bundles: paths ----
		bc("traversal", func(t *testing.T, w *hostileWS) {
			w.write(t, "x", "x\n") // it exists, next to the bundle
			badPath("../x")(t, w)
		}, `manifest.json: files[3].path "../x": has a ".." segment`),
		bc("traversal inside", badPath("data/../../x"), "manifest.json: files[3].path", `".." segment`),
		bc("absolute", badPath("/etc/passwd"), "manifest.json: files[3].path", `"/etc/passwd"`, "absolute"),
		bc("backslash", badPath(`..\..\x`), "manifest.json: files[3].path", "backslash"),
		bc("NUL", badPath("report.md\x00.txt"), "manifest.json: files[3].path", "U+0000"),
		bc("newline", badPath("a\nb.txt"), "manifest.json: files[3].path", "U+000A"),
		bc("escape", badPath("\x1b[2Jx.txt"), "manifest.json: files[3].path", "U+001B"),
		bc("DEL", badPath("a\x7f.txt"), "manifest.json: files[3].path", "U+007F"),
		bc("NEL", badPath("a\u0085.txt"), "manifest.json: files[3].path", "U+0085"),
		bc("invalid UTF-8", badPath("caf\xe9.txt"), "manifest.json: files[3].path", "not valid UTF-8"),
		bc("unpaired surrogate", withEntry(mfile{raw: `{"path": "a\ud800.txt", "sha256": "` + sha256Of("x\n") + `", "size": 2}`}), `files[3].path "a\ud800.txt"`, "unpaired escaped UTF-16 surrogate"),
		bc("empty path", badPath(""), "manifest.json: files[3].path", "is empty"),
		bc("empty segment", badPath("data//chart.svg"), "manifest.json: files[3].path", "empty segment"),
		bc("dot segment", badPath("./notes.txt"), "manifest.json: files[3].path", `"." segment`),
		bc("trailing slash", badPath("data/"), "manifest.json: files[3].path", "ends with /"),
		bc("deep path", func(t *testing.T, w *hostileWS) {
			w.write(t, "bundle/"+deep, "x\n")
			badPath(deep)(t, w)
		}, "manifest.json: files[3].path", "longer than 1024 bytes"),
		bc("duplicate path", func(t *testing.T, w *hostileWS) {
			withEntry(w.entry(t, "notes.txt"))(t, w)
		}, `files[3].path "notes.txt": duplicate of files[1].path`),
		bc("reserved catalog", func(t *testing.T, w *hostileWS) {
			w.write(t, "bundle/.distributor.json", `{"schema_version": 4}`)
			withEntry(w.entry(t, ".distributor.json"))(t, w)
		}, `files[3].path ".distributor.json": has a segment starting with ".distributor" (reserved`),
		bc("reserved lock", func(t *testing.T, w *hostileWS) {
			w.write(t, "bundle/.distributor.lock", "{}")
			withEntry(w.entry(t, ".distributor.lock"))(t, w)
		}, `files[3].path ".distributor.lock": has a segment starting with ".distributor" (reserved`),
		bc("reserved nested", badPath("data/.distributor-tmp-1"), "manifest.json: files[3].path", "reserved"),
		bc("manifest listed", func(t *testing.T, w *hostileWS) {
			withEntry(w.entry(t, "manifest.json"))(t, w)
		}, `files[3].path "manifest.json": is the manifest itself`),
		bc("parent listed as file", withEntry(mfile{path: "notes.txt/x", sha: sha256Of("x\n"), size: 2}), `files[3].path "notes.txt/x": its parent "notes.txt" is listed as a file (files[1])`),
		bc("duplicate path key", withEntry(mfile{raw: `{"path": "x.txt", "sha256": "` + sha256Of("x\n") + `", "size": 2, "path": "../x"}`}), "files[3].path", "duplicate field"),

		// ---- bundles: the document ----
		bc("unknown field", withDoc(func(m *manifestDoc) { m.extra = `"publish": {"to": "/etc"}` }), `unknown field "publish"`),
		bc("unknown file field", withEntry(mfile{raw: `{"path": "x.txt", "sha256": "` + sha256Of("x\n") + `", "size": 2, "mode": "0777"}`}), "files[3]", `unknown field "mode"`),
		bc("schema version 2", withDoc(func(m *manifestDoc) { m.schema = "2" }), "schema_version", "unsupported schema version"),
		bc("schema version 0", withDoc(func(m *manifestDoc) { m.schema = "0" }), "schema_version", "must be 1"),
		bc("schema version string", withDoc(func(m *manifestDoc) { m.schema = `"1"` }), "schema_version", "must be an integer"),
		bc("no files", withDoc(func(m *manifestDoc) { m.rawFiles = "[]" }), "files", "at least one file"),
		bc("files null", withDoc(func(m *manifestDoc) { m.rawFiles = "null" }), "files", "must be an array"),
		bc("bad id", withDoc(func(m *manifestDoc) { m.id = `"../../etc"` }), `id "../../etc"`, "must start with a letter or a digit"),
		bc("id too long", withDoc(func(m *manifestDoc) { m.id = jsonString(strings.Repeat("a", 129)) }), "id", "at most 128"),
		bc("bad created", withDoc(func(m *manifestDoc) { m.created = `"yesterday"` }), `created "yesterday"`, "RFC 3339"),
		bc("trailing garbage", withDoc(func(m *manifestDoc) { m.trailer = `{"files": []}` }), "manifest.json: invalid JSON at line", "unexpected data after top-level value"),
		bc("nested id", withDoc(func(m *manifestDoc) { m.id = nested(1000) }), "id", "must be a string, got an array"),
		bc("nested unknown field", withDoc(func(m *manifestDoc) { m.extra = `"deep": ` + nested(1000) }), `unknown field "deep"`),
		bc("duplicate key", withDoc(func(m *manifestDoc) { m.extra = `"id": "other.id"` }), "id", "duplicate field"),
		bc("not JSON", func(t *testing.T, w *hostileWS) { w.write(t, "bundle/manifest.json", "id: reports\n") }, "invalid character"),
		bc("empty", func(t *testing.T, w *hostileWS) { w.write(t, "bundle/manifest.json", "") }, "document is empty"),
		bc("array", func(t *testing.T, w *hostileWS) { w.write(t, "bundle/manifest.json", "[]") }, "must be a JSON object"),
		bc("missing", func(t *testing.T, w *hostileWS) {
			if err := os.Remove(filepath.Join(w.bundle, "manifest.json")); err != nil {
				t.Fatal(err)
			}
		}, "manifest.json: missing"),
		bc("symlinked manifest", func(t *testing.T, w *hostileWS) {
			if err := os.Rename(filepath.Join(w.bundle, "manifest.json"), filepath.Join(w.dir, "elsewhere.json")); err != nil {
				t.Fatal(err)
			}
			w.symlink(t, "../elsewhere.json", "bundle/manifest.json")
		}, "manifest.json: is a symlink"),
		bc("uppercase sha256", editEntry("notes.txt", func(f *mfile) { f.sha = strings.ToUpper(f.sha[:7]) + strings.ToUpper(f.sha[7:]) }), "files[1].sha256", `must start with "sha256:"`),
		bc("uppercase hex", editEntry("notes.txt", func(f *mfile) { f.sha = "sha256:" + strings.ToUpper(f.sha[7:]) }), "files[1].sha256", "lowercase"),
		bc("negative size", editEntry("notes.txt", func(f *mfile) { f.size = -1 }), "files[1].size -1", "must not be negative"),
		bc("size out of range", withEntry(mfile{raw: `{"path": "x.txt", "sha256": "` + sha256Of("x\n") + `", "size": 99999999999999999999}`}), "files[3].size", "out of range"),
		bc("digest lie", withDoc(func(m *manifestDoc) { m.digest = jsonString(sha256Of("other")) }), "digest", "does not match the listed files"),
		bc("bad digest", withDoc(func(m *manifestDoc) { m.digest = `"md5:0123"` }), "digest", `must start with "sha256:"`),

		// ---- bundles: the files on disk ----
		bf("size lie", editEntry("notes.txt", func(f *mfile) { f.size++ }), "notes.txt: size 12 does not match manifest size 13"),
		bf("giant size", editEntry("notes.txt", func(f *mfile) { f.size = 1 << 62 }), "notes.txt: size 12 does not match manifest size 4611686018427387904"),
		bf("hash lie", editEntry("notes.txt", func(f *mfile) { f.sha = sha256Of("other bytes\n") }), "notes.txt: sha256 mismatch"),
		bf("file missing", withEntry(mfile{path: "gone.txt", sha: sha256Of("x\n"), size: 2}), "gone.txt: missing"),
		bf("directory listed", func(t *testing.T, w *hostileWS) {
			w.write(t, "bundle/dir/x.txt", "x\n")
			withEntry(mfile{path: "dir", sha: sha256Of(""), size: 0})(t, w)
		}, "dir: is a directory"),
		bf("symlinked file", func(t *testing.T, w *hostileWS) {
			w.write(t, "secret.txt", "secret\n")
			w.symlink(t, "../secret.txt", "bundle/notes.txt")
			w.manifest(t, manifestDoc{files: w.files(t)}) // hashes the target
		}, "notes.txt: is a symlink"),
		bf("symlinked directory", func(t *testing.T, w *hostileWS) {
			if err := os.Rename(filepath.Join(w.bundle, "data"), filepath.Join(w.dir, "elsewhere")); err != nil {
				t.Fatal(err)
			}
			w.symlink(t, "../elsewhere", "bundle/data")
			w.manifest(t, manifestDoc{files: w.files(t)})
		}, `data/chart.svg: parent directory "data" is a symlink`),
		bf("symlinked directory absolute", func(t *testing.T, w *hostileWS) {
			if err := os.Rename(filepath.Join(w.bundle, "data"), filepath.Join(w.dir, "elsewhere")); err != nil {
				t.Fatal(err)
			}
			w.symlink(t, filepath.Join(w.dir, "elsewhere"), "bundle/data")
			w.manifest(t, manifestDoc{files: w.files(t)})
		}, `data/chart.svg: parent directory "data" is a symlink`),

		// ---- configuration ----
		cc("unknown field", configEdit("    workflow: additive\n", "    workflow: additive\n    colour: red\n"), "distributor.yaml:10: destinations[0]", `"colour"`),
		cc("unknown top-level field", configEdit("destinations:\n", "pipeline: {}\ndestinations:\n"), `"pipeline"`),
		cc("legacy state", configEdit("    workflow: additive\n", "    state: single_owner\n"), "distributor.yaml:9: destinations[0]", `"state"`, "workflow: additive"),
		cc("legacy takeover", configEdit("    workflow: additive\n", "    workflow: additive\n    takeover: true\n"), "distributor.yaml:10: destinations[0]", `"takeover"`, "workflow: additive"),
		cc("legacy reconciliation", configEdit("    workflow: additive\n", "    workflow: additive\n    reconciliation: adopt\n"), `"reconciliation"`, "workflow: replacement"),
		cc("legacy transfer", configEdit("    workflow: additive\n", "    workflow: additive\n    transfer: {mode: copy}\n"), `"transfer"`),
		cc("bad placeholder", configEdit("    path: www\n", "    path: www/{nope}\n"), "destinations[0].path", "{nope}"),
		cc("bad prefix placeholder", configEdit("prefix: daily/", "prefix: \"{nope}/\""), "paths.prefix", "{nope}"),
		cc("unclosed placeholder", configEdit("    path: www\n", "    path: www/{source_id\n"), "destinations[0].path"),
		cc("prefix traversal", configEdit("prefix: daily/", "prefix: ../"), "paths.prefix", `".." segment`),
		cc("prefix deep traversal", configEdit("prefix: daily/", "prefix: daily/../../"), "paths.prefix", `".." segment`),
		cc("prefix absolute", configEdit("prefix: daily/", "prefix: /etc/"), "paths.prefix", "absolute"),
		cc("prefix reserved", configEdit("prefix: daily/", "prefix: .distributor/"), "paths.prefix", "reserved"),
		cc("rename traversal", configEdit("index.md}", "../../etc/passwd}"), "rename", `"../../etc/passwd"`, `".." segment`),
		cc("rename absolute", configEdit("index.md}", "/etc/cron.d/x}"), "rename", `"/etc/cron.d/x"`, "absolute"),
		cc("rename reserved", configEdit("index.md}", ".distributor.json}"), "rename", `".distributor.json"`, "reserved"),
		cc("rename reserved lock", configEdit("index.md}", "a/.distributor.lock}"), "rename", "reserved"),
		cc("rename key traversal", configEdit("{report.md:", "{../report.md:"), "rename", `"../report.md"`, `".." segment`),
		cc("rename backslash", configEdit("index.md}", `'..\..\x.md'}`), "rename", "backslash"),
		cc("alias bomb", configText(billionLaughs()), "pipelines[0].destinations[0]", "must be a string, not a list"),
		cc("merge key bomb", configText(mergeBomb()), "merge keys (<<) are not supported"),
		cc("tab indented", configText("pipelines:\n\t- id: reports\n\t  source: bundle\n\t  destinations: [site]\n"), "invalid YAML"),
		cc("tab in mapping", configEdit("    backend: local\n", "\tbackend: local\n"), "invalid YAML"),
		cc("destinations not a list", configEdit("destinations: [site]", "destinations: site"), "pipelines[0].destinations"),
		cc("html not a bool", configEdit("    workflow: additive\n", "    workflow: additive\n    publish: {html: maybe}\n"), "publish.html"),
		cc("path a mapping", configEdit("    path: www\n", "    path: {local: www}\n"), "destinations[0].path"),
		cc("keep_min a string", configEdit("older_than: 1d\n", "older_than: 1d\n        keep_min: five\n"), "keep_min"),
		cc("root a list", configText("- pipelines\n"), "mapping"),
		cc("workflow typo", configEdit("workflow: additive", "workflow: replace"), "workflow", `"replace" is not one of additive, replacement; did you mean "replacement"?`),
		cc("unknown backend", configEdit("backend: local", "backend: ftp"), "backend", `"ftp"`),
		cc("duplicate destination", configEdit("destinations:\n  - id: site\n", "destinations:\n  - id: site\n    backend: local\n    path: other\n  - id: site\n"), "destinations[1].id", "site"),
		cc("unknown destination", configEdit("destinations: [site]", "destinations: [site, nowhere]"), `"nowhere"`),
		cc("duplicate key", configEdit("    path: www\n", "    path: www\n    path: /etc\n"), "destinations[0].path"),
		cc("NUL in path", configEdit("    path: www\n", "    path: \"www\\0/x\"\n"), "destinations[0].path", "NUL"),
		cc("second document", configText(hostileConfig+"---\npipelines: []\n"), "second YAML document"),
		cc("empty", configText(""), "at least one pipeline"),
		cc("invalid UTF-8", configText("pipelines:\n  - id: caf\xe9\n"), "invalid YAML"),
		cc("nested", configEdit("destinations: [site]", "destinations: "+nested(1000)), "pipelines[0].destinations"),
		cc("sftp block on local", configEdit("    workflow: additive\n", "    workflow: additive\n    sftp: {host: example.com, user: u}\n"), "sftp"),
		cc("placeholder in source", configEdit("source: bundle", "source: bundle/{source_id}"), "pipelines[0].source", "{source_id}"),

		// ---- catalogs at the destination root ----
		sc("invalid JSON", catalogText(`{"schema_version": 4, "outputs": [`), "invalid"),
		sc("not JSON", catalogText("<html>oops</html>\n"), "not a JSON object"),
		sc("empty", catalogText(""), "not a JSON object"),
		sc("array", catalogText("[]\n"), "not a JSON object"),
		sc("no schema_version", catalogText(`{"outputs": []}`), "schema_version"),
		sc("schema_version string", catalogText(`{"schema_version": "4"}`), "schema_version"),
		sc("future version", func(t *testing.T, w *hostileWS) {
			w.editCatalog(t, func(doc map[string]any) { doc["schema_version"] = 5 })
		}, "schema_version 5"),
		sc("unknown top-level field", func(t *testing.T, w *hostileWS) {
			w.editCatalog(t, func(doc map[string]any) { doc["owners"] = []any{"reports"} })
		}, `"owners"`),
		sc("trailing data", func(t *testing.T, w *hostileWS) {
			b, err := os.ReadFile(filepath.Join(w.root, ".distributor.json"))
			if err != nil {
				t.Fatal(err)
			}
			w.write(t, "www/.distributor.json", string(b)+"{}\n")
		}, "after top-level value"),
		sc("traversal record", outputEdit(func(o map[string]any) { o["path"] = "../../etc/passwd" }), "outputs[0].path", `".." segment`),
		sc("absolute record", outputEdit(func(o map[string]any) { o["path"] = "/etc/passwd" }), "outputs[0].path", "absolute"),
		sc("backslash record", outputEdit(func(o map[string]any) { o["path"] = `..\x` }), "outputs[0].path", "backslash"),
		sc("NUL record", outputEdit(func(o map[string]any) { o["path"] = "a\x00b" }), "outputs[0].path", "U+0000"),
		sc("invalid UTF-8 record", spliceRecord("caf\xe9.html"), "not valid UTF-8"),
		sc("unpaired surrogate record", spliceRecord(`caf\ud800.html`), "unpaired escaped UTF-16 surrogate"),
		sc("reserved record", outputEdit(func(o map[string]any) { o["path"] = ".distributor.lock" }), "outputs[0].path", "reserved"),
		sc("duplicate record", func(t *testing.T, w *hostileWS) {
			w.editCatalog(t, func(doc map[string]any) {
				outs := doc["outputs"].([]any)
				doc["outputs"] = append(outs, outs[0])
			})
		}, "duplicates outputs[0]"),
		sc("negative size record", outputEdit(func(o map[string]any) { o["size"] = -1 }), "outputs[0].size", "negative"),
		sc("bad owner record", outputEdit(func(o map[string]any) { o["pipeline_id"] = "../x" }), "outputs[0].pipeline_id"),
		sc("javascript URL record", outputEdit(func(o map[string]any) { o["url"] = "javascript:alert(1)" }), "outputs[0].url"),
		sc("unknown record field", outputEdit(func(o map[string]any) { o["owner"] = "someone" }), `"owner"`),
		sc("catalog is a directory", func(t *testing.T, w *hostileWS) {
			if err := os.Remove(filepath.Join(w.root, ".distributor.json")); err != nil {
				t.Fatal(err)
			}
			w.write(t, "www/.distributor.json/x", "x\n")
		}, "directory"),
		sc("catalog is a directory in a bare root", func(t *testing.T, w *hostileWS) {
			if err := os.RemoveAll(w.root); err != nil {
				t.Fatal(err)
			}
			w.write(t, "www/.distributor.json/x", "x\n")
		}, "directory"),
		sc("catalog symlinked outside", func(t *testing.T, w *hostileWS) {
			if err := os.Rename(filepath.Join(w.root, ".distributor.json"), filepath.Join(w.dir, "elsewhere.json")); err != nil {
				t.Fatal(err)
			}
			w.symlink(t, "../elsewhere.json", "www/.distributor.json")
		}, "symbolic link"),
		sc("catalog symlinked in a bare root", func(t *testing.T, w *hostileWS) {
			if err := os.RemoveAll(w.root); err != nil {
				t.Fatal(err)
			}
			w.write(t, "elsewhere.json", `{"schema_version": 4, "created_at": "2026-06-04T12:00:00Z", "updated_at": "2026-06-04T12:00:00Z", "state": {"mode": "catalog"}, "outputs": []}`+"\n")
			w.write(t, "www/.keep", "")
			w.symlink(t, "../elsewhere.json", "www/.distributor.json")
		}, "symbolic link"),
	}
}

// hostileCmd is one command run on a hostile case, with the fragments its
// output must hold besides the case's own.
type hostileCmd struct {
	args []string
	want []string
}

// hostileCommands are the commands each kind of case runs, all of which must
// refuse without writing.
func hostileCommands(w *hostileWS, kind hostileKind) []hostileCmd {
	c := []string{"--config", w.conf}
	cmd := func(want []string, args ...string) hostileCmd {
		if args[0] != "bundle" {
			args = append(args, c...)
		}
		return hostileCmd{args: args, want: want}
	}
	switch kind {
	case badBundle:
		nothing := []string{"nothing was published"}
		return []hostileCmd{
			cmd(nothing, "run"),
			cmd(nil, "run", "--output", "json"),
			cmd(nothing, "run", "--dry-run"),
			cmd(nothing, "run", "--pipeline", "reports", "--source", w.bundle),
			cmd(nil, "validate", "--source", w.bundle),
			cmd([]string{"invalid bundle"}, "bundle", "verify", w.bundle),
		}
	case badConfig:
		return []hostileCmd{
			cmd(nil, "run"),
			cmd(nil, "run", "--output", "json"),
			cmd(nil, "run", "--dry-run"),
			cmd(nil, "validate", "--source", w.bundle),
		}
	default:
		conflict := []string{"fail_conflict", "destination state (.distributor.json) is"}
		refused := []string{".distributor.json at", " state ("}
		return []hostileCmd{
			cmd(conflict, "run"),
			cmd(conflict, "run", "--output", "json"),
			cmd(conflict, "run", "--dry-run"),
			cmd(refused, "reconcile-state", "--pipeline", "reports", "--destination", "site", "--all-owners"),
			cmd(refused, "prune", "--pipeline", "reports", "--destination", "site", "--apply"),
			cmd(refused, "verify", "--pipeline", "reports", "--destination", "site"),
			cmd([]string{"state ", ".distributor.json at"}, "state", "show", "--pipeline", "reports", "--destination", "site"),
		}
	}
}

func TestHostileInputs(t *testing.T) {
	cases := hostileCases()
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case %q", tc.name)
		}
		seen[tc.name] = true
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		modes := []bool{false, true} // root absent, managed root
		if tc.kind == badCatalog {
			modes = []bool{true}
		}
		for _, managed := range modes {
			name := tc.name + "/no-root"
			if managed {
				name = tc.name + "/managed-root"
			}
			t.Run(name, func(t *testing.T) {
				if tc.bug != "" {
					t.Skip("BUG: " + tc.bug)
				}
				t.Parallel() // each case has its own workspace
				w := newHostileWS(t, managed)
				tc.setup(t, w)
				wantCode := 1
				if tc.kind == badConfig {
					wantCode = 2
				}
				for _, hc := range hostileCommands(w, tc.kind) {
					before := snapshotTree(t, w.dir)
					code, out := hostileExec(t, hc.args...)
					out = strings.ReplaceAll(out, w.dir, "$WORK")
					cmd := strings.ReplaceAll(strings.Join(hc.args, " "), w.dir, "$WORK")
					if code != wantCode {
						t.Errorf("%s: exit %d, want %d\n%s", cmd, code, wantCode, out)
					}
					for _, frag := range slices.Concat(tc.want, hc.want) {
						if !strings.Contains(out, frag) {
							t.Errorf("%s: output does not name the problem: no %q in\n%s", cmd, frag, out)
						}
					}
					if diff := diffTrees(before, snapshotTree(t, w.dir)); diff != "" {
						t.Errorf("%s wrote to the workspace:\n%s\noutput:\n%s", cmd, diff, out)
					}
				}
			})
		}
	}
}

// TestHostileControl proves the harness sees writes: the good bundle,
// published the same way, changes the snapshot of both kinds of workspace.
func TestHostileControl(t *testing.T) {
	for _, managed := range []bool{false, true} {
		w := newHostileWS(t, managed)
		before := snapshotTree(t, w.dir)
		if code, out := hostileExec(t, "run", "--config", w.conf); code != 0 {
			t.Fatalf("managed=%v: good run: exit %d\n%s", managed, code, out)
		}
		diff := diffTrees(before, snapshotTree(t, w.dir))
		for _, want := range []string{"www/.distributor.json", "www/daily/index.html"} {
			if !strings.Contains(diff, want) {
				t.Errorf("managed=%v: the snapshot did not see %s written; diff:\n%s", managed, want, diff)
			}
		}
	}
}

// hostileExec runs the CLI in-process and returns its exit status and its
// output. With --output json, stdout must be one JSON document (or empty,
// for errors before a report): its string values are what is searched.
func hostileExec(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Execute(context.Background(), args, wide(cli.Env{Stdout: &stdout, Stderr: &stderr, Version: "test"}))
	text := stdout.String()
	if slices.Contains(args, "json") && stdout.Len() > 0 {
		var doc any
		dec := json.NewDecoder(&stdout)
		if err := dec.Decode(&doc); err != nil {
			t.Errorf("distributor %v: stdout is not JSON: %v\n%s", args, err, text)
		} else if dec.More() {
			t.Errorf("distributor %v: stdout holds more than one JSON document:\n%s", args, text)
		}
		var strs []string
		collectStrings(doc, &strs)
		text = strings.Join(strs, "\n")
	}
	return code, text + "\n" + stderr.String()
}

func collectStrings(v any, out *[]string) {
	switch v := v.(type) {
	case string:
		*out = append(*out, v)
	case []any:
		for _, e := range v {
			collectStrings(e, out)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			collectStrings(v[k], out)
		}
	}
}

// snapshotTree describes every entry below dir without following symlinks:
// type, permissions, and for files their mtime and sha256.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			snap[rel] = "symlink -> " + target
		case fi.IsDir():
			snap[rel] = "dir " + fi.Mode().String()
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			snap[rel] = fmt.Sprintf("file %s %d bytes mtime %d sha256 %x", fi.Mode(), len(b), fi.ModTime().UnixNano(), sum)
		default:
			snap[rel] = "other " + fi.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func diffTrees(before, after map[string]string) string {
	var lines []string
	for p, b := range before {
		switch a, ok := after[p]; {
		case !ok:
			lines = append(lines, fmt.Sprintf("  removed %s (%s)", p, b))
		case a != b:
			lines = append(lines, fmt.Sprintf("  changed %s: %s -> %s", p, b, a))
		}
	}
	for p, a := range after {
		if _, ok := before[p]; !ok {
			lines = append(lines, fmt.Sprintf("  created %s (%s)", p, a))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
