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
