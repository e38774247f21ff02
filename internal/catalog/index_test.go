package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexTransforms: an archive index or feed record is generated with
// transform "index" or "feed" and no source_path (it derives from the
// catalog, not a bundle file); with a source_path it is invalid.
func TestIndexTransforms(t *testing.T) {
	valid, err := os.ReadFile(filepath.Join("testdata", "full.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	const gen = `"source_path": "report.md",
      "transform": "markdown_to_html"`
	if !strings.Contains(string(valid), gen) {
		t.Fatal("test bug: the golden document has no markdown record")
	}
	for _, tr := range []string{TransformIndex, TransformFeed} {
		doc := strings.Replace(string(valid), gen, `"transform": "`+tr+`"`, 1)
		st := Read([]byte(doc))
		if st.Status != StatusCatalog {
			t.Errorf("%s without source_path: %s %v", tr, st.Status, st.Problem)
		}
		if _, _, err := Scan(strings.NewReader(doc), func(*Output) error { return nil }); err != nil {
			t.Errorf("%s: Scan: %v", tr, err)
		}
		if st.Status == StatusCatalog {
			out, err := Encode(st.Catalog)
			if err != nil || string(out) != doc {
				t.Errorf("%s: not re-encoded byte-identically (%v)", tr, err)
			}
		}
		doc = strings.Replace(string(valid), gen, `"source_path": "report.md",
      "transform": "`+tr+`"`, 1)
		if st := Read([]byte(doc)); st.Status != StatusInvalid || !strings.Contains(st.Problem.Error(), "has no source_path") {
			t.Errorf("%s with source_path: %s %v", tr, st.Status, st.Problem)
		}
	}
}
