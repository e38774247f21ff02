package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/distributor-dev/distributor/internal/strictjson"
	"github.com/go-json-experiment/json/jsontext"
)

// referenceParse is Parse as a strict decode of the whole document into
// the wire types.
func referenceParse(data []byte) (*Catalog, error) {
	// One strict reader: invalid UTF-8, unpaired surrogate escapes,
	// duplicate or unknown members and trailing data are all errors.
	var w wireCatalog
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return nil, decodeError(err, data)
	}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	c := &Catalog{SchemaVersion: w.SchemaVersion, DistributorVersion: w.DistributorVersion}
	c.CreatedAt = parseTime(w.CreatedAt, "created_at", add)
	c.UpdatedAt = parseTime(w.UpdatedAt, "updated_at", add)
	if w.State == nil {
		add("state: missing")
	} else if w.State.Mode != ModeCatalog {
		add("state.mode: %q is not %q", w.State.Mode, ModeCatalog)
	}
	if w.Outputs == nil {
		var keys map[string]jsontext.Value
		if strictjson.Unmarshal(data, &keys) != nil || keys["outputs"] == nil || string(keys["outputs"]) == "null" {
			add("outputs: missing (an empty list is [])")
		}
	}
	c.Outputs = make([]Output, 0, len(w.Outputs))
	for i, wo := range w.Outputs {
		field := fmt.Sprintf("outputs[%d]", i)
		fadd := func(format string, args ...any) { add(field+"."+format, args...) }
		o := Output{Path: wo.Path, PipelineID: wo.PipelineID, DestinationID: wo.DestinationID,
			Kind: wo.Kind, SourcePath: wo.SourcePath, Transform: wo.Transform, URL: wo.URL, SHA256: wo.SHA256}
		if wo.Source == nil {
			fadd("source: missing")
		} else {
			o.Source = Source{ID: wo.Source.ID, Digest: wo.Source.Digest}
			o.Source.Created = parseTime(wo.Source.Created, "source.created", fadd)
		}
		if wo.Size == nil {
			fadd("size: missing")
		} else {
			o.Size = *wo.Size
		}
		o.CreatedAt = parseTime(wo.CreatedAt, "created_at", fadd)
		o.UpdatedAt = parseTime(wo.UpdatedAt, "updated_at", fadd)
		c.Outputs = append(c.Outputs, o)
	}
	if len(errs) == 0 {
		if err := Validate(c); err != nil {
			return nil, err
		}
		return c, nil
	}
	if err := Validate(c); err != nil {
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// TestParseErrorsMatchStrictJSON: the one reader's errors are the ones a
// strict decode of the whole document into the wire types gives (field,
// reason, line and column), on the mutated documents of
// TestScanAgreesWithParse and on broken structure.
func TestParseErrorsMatchStrictJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	names := []string{}
	for n := range mutations {
		names = append(names, n)
	}
	var docs []string
	for round := range 400 {
		c := randomCatalog(r, 1+r.IntN(12))
		sorted, _ := Parse(must(Encode(c)))
		var recs []string
		for k := range sorted.Outputs {
			recs = append(recs, strings.TrimPrefix(string(appendOutput(nil, &sorted.Outputs[k])), "\n    "))
		}
		docs = append(docs, mutations[names[round%len(names)]](string(must(Encode(c))), recs, r.IntN(len(recs))))
	}
	g := `{"schema_version": 4, "created_at": "2026-06-04T12:00:00Z", "updated_at": "2026-06-04T12:00:00Z", "state": {"mode": "catalog"}, "outputs": []}`
	docs = append(docs, `{"a":1 "b":[]}`, `{"schema_version":4,}`, `{"schema_version" 1}`, `{"outputs":[{},]}`, `{"outputs":[{} {}]}`, `{a:1}`, g+`x`, `{"schema_version":4`, `{"outputs":[{}`, `{"outputs":[1]}`, `{"outputs":{}}`, `{"schema_version":"1"}`, `[]`, `{"outputs":[{"path":"a","path":"b"}]}`, `{"schema_version":4,"schema_version":4}`, `{"outputs":[{"y":1}]}`, ``, ` `, `{"state":{"mode":"x","y":1}}`, `{"state":null}`, `{"outputs":[,]}`, `{"outputs":[`, `{"outputs":`, `{"outputs"`, `{"outputs`, `{1:2}`, `{"\u006fwners":1}`, "{\"a\xff\":1}", `{"outputs":[{"size":"1"}]}`, `{"outputs":[{"size":1.5}]}`, `{"outputs":[{"source":[]}]}`, strings.Replace(g, "[]", "null", 1), `{"outputs":[]}   {}`, `nul`, `"x"`, `{"created_at": 5}`)
	for _, d := range docs {
		_, want := referenceParse([]byte(d))
		_, got := Parse([]byte(d))
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Errorf("on %.80q\n strict decode: %v\n Parse:         %v", d, want, got)
		}
	}
}

// FuzzParseAgreesWithStrictDecode: Parse accepts exactly what a strict
// decode of the whole document accepts, with the same catalog, and Scan
// accepts it too when its records are sorted.
func FuzzParseAgreesWithStrictDecode(f *testing.F) {
	valid, _ := os.ReadFile(filepath.Join("testdata", "full.golden.json"))
	f.Add(valid)
	f.Add(bytes.ReplaceAll(valid, []byte("\n"), nil))
	f.Add([]byte(`{"schema_version":4,"outputs":null}`))
	f.Add([]byte(`{"outputs":[{"size":1.5}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := referenceParse(data)
		got, err := Parse(data)
		if (werr == nil) != (err == nil) {
			t.Fatalf("strict decode: %v\nParse: %v\ninput: %q", werr, err, data)
		}
		if err != nil {
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("catalogs differ (-strict decode +Parse):\n%s", diff)
		}
		var scanned []Output
		if _, _, err := Scan(bytes.NewReader(data), func(o *Output) error { scanned = append(scanned, *o); return nil }); err != nil {
			if !errors.Is(err, ErrUnsorted) {
				t.Fatalf("Scan: %v\ninput: %q", err, data)
			}
		} else if diff := cmp.Diff(got.Outputs, scanned, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Scan differs from Parse:\n%s", diff)
		}
	})
}

// A value of the wrong type is named with its line and column, which a
// hand repair needs in a catalog of thousands of records.
func TestReadNamesTheLineOfAWrongValue(t *testing.T) {
	doc := "{\n  \"schema_version\": 4,\n  \"outputs\": [\n    {\"size\": \"12\"}\n  ]\n}\n"
	s := Read([]byte(doc))
	want := `decode catalog: line 4, column 14: outputs[0].size: must be an integer, got a string`
	if s.Status != StatusInvalid || s.Problem == nil || s.Problem.Error() != want {
		t.Errorf("Read = %s, %v\nwant invalid, %s", s.Status, s.Problem, want)
	}
}

// TestOwnerCheckedForEveryRecordThatDiffers: the reader checks an owner
// and source once for the records that repeat one found valid, never for
// one that differs or one found invalid (each record's problem is named).
func TestOwnerCheckedForEveryRecordThatDiffers(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	src := Source{ID: "s", Digest: "sha256:" + strings.Repeat("0", 64), Created: now}
	c := &Catalog{SchemaVersion: SchemaVersion, CreatedAt: now, UpdatedAt: now}
	for i := range 5 {
		c.Outputs = append(c.Outputs, Output{Path: fmt.Sprintf("f%d", i), PipelineID: "p", DestinationID: "d", Source: src,
			Kind: KindSource, SHA256: "sha256:" + strings.Repeat("1", 64), CreatedAt: now, UpdatedAt: now})
	}
	data, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	// f1 and f2 share one bad digest, f3 a bad pipeline; f0 and f4 are valid.
	bad := strings.Repeat("0", 63) + "X"
	doc := string(data)
	for _, p := range []string{"f1", "f2"} {
		i := strings.Index(doc, `"path": "`+p+`"`)
		j := i + strings.Index(doc[i:], strings.Repeat("0", 64))
		doc = doc[:j] + bad + doc[j+64:]
	}
	i := strings.Index(doc, `"path": "f3"`)
	doc = doc[:i] + strings.Replace(doc[i:], `"pipeline_id": "p"`, `"pipeline_id": "P"`, 1)
	_, err = Parse([]byte(doc))
	for _, want := range []string{"outputs[1].source.digest", "outputs[2].source.digest", "outputs[3].pipeline_id"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse: %v\nwant a problem at %s", err, want)
		}
	}
	if err != nil && (strings.Contains(err.Error(), "outputs[0]") || strings.Contains(err.Error(), "outputs[4]")) {
		t.Errorf("Parse: %v\nnames a valid record", err)
	}
}
