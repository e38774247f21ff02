package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

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

// hostileCases are all the cases: bundles, configurations, then catalogs.
func hostileCases() []hostileCase {
	return slices.Concat(hostileBundlePathCases(), hostileBundleCases(), hostileConfigCases(), hostileCatalogCases())
}

// bc is a bundle case: a problem with the manifest.
func bc(name string, setup func(*testing.T, *hostileWS), want ...string) hostileCase {
	return hostileCase{name: "bundle/" + name, kind: badBundle, setup: setup, want: append([]string{"manifest.json"}, want...)}
}

// bf is a problem with one listed file rather than the manifest.
func bf(name string, setup func(*testing.T, *hostileWS), want ...string) hostileCase {
	return hostileCase{name: "bundle/" + name, kind: badBundle, setup: setup, want: want}
}

// cc is a configuration case.
func cc(name string, setup func(*testing.T, *hostileWS), want ...string) hostileCase {
	return hostileCase{name: "config/" + name, kind: badConfig, setup: setup, want: append([]string{"distributor.yaml"}, want...)}
}

// sc is a catalog case.
func sc(name string, setup func(*testing.T, *hostileWS), want ...string) hostileCase {
	return hostileCase{name: "catalog/" + name, kind: badCatalog, setup: setup, want: want}
}

// hostileBundlePathCases: bundles listing a path that must be refused.
func hostileBundlePathCases() []hostileCase {
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
	}
}

// hostileBundleCases: bad manifest documents, and files on disk that do
// not match their manifest.
func hostileBundleCases() []hostileCase {
	return []hostileCase{
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
	}
}

// hostileConfigCases: configurations that must be refused.
func hostileConfigCases() []hostileCase {
	return []hostileCase{
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
		cc("unknown backend", configEdit("backend: local", "backend: gopher"), "backend", `"gopher"`),
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
	}
}

// hostileCatalogCases: damaged catalogs at a managed destination root.
func hostileCatalogCases() []hostileCase {
	return []hostileCase{
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
