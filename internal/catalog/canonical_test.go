package catalog

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// canonicalRecord returns o as Encode lays it out inside the outputs array,
// from its opening brace.
func canonicalRecord(o *Output) []byte {
	return bytes.TrimPrefix(appendOutput(nil, o), []byte("\n    "))
}

func canonicalSamples() []Output {
	c := fullCatalog()
	odd := c.Outputs[0]
	odd.Path = "a\u2028b/\"q\"/é<&>\u00a0.html"
	odd.URL = "https://reports.example.com/a%20b?x=1&y=\"2\""
	odd.Source.ID = "S.1_2-3"
	odd.Size = 9223372036854775807
	odd.CreatedAt = time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC)
	gen := c.Outputs[0]
	gen.Kind, gen.SourcePath, gen.Transform, gen.URL = KindGenerated, "", TransformIndex, ""
	out := append([]Output(nil), c.Outputs...)
	for i := range out {
		out[i].CreatedAt = out[i].CreatedAt.UTC().Truncate(time.Second)
	}
	return append(out, odd, gen)
}

func TestParseCanonicalReadsWhatEncodeWrites(t *testing.T) {
	var memo canonMemo
	for _, want := range canonicalSamples() {
		var got Output
		if rec := canonicalRecord(&want); parseCanonical(rec, &got, &memo) != len(rec) {
			t.Fatalf("refused Encode's layout of %q:\n%s", want.Path, canonicalRecord(&want))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("record %q differs (-want +got):\n%s", want.Path, diff)
		}
	}
}

// TestParseCanonicalRefusesOtherLayouts: the same record in any other valid
// JSON layout is refused by the fast path, and decoded to the same record
// by Scan's general path, which reports the document as not canonical.
func TestParseCanonicalRefusesOtherLayouts(t *testing.T) {
	o := canonicalSamples()[0]
	o.URL = "" // so that one can be added
	rec := string(canonicalRecord(&o))
	compact, err := json.Marshal(json.RawMessage(rec))
	if err != nil {
		t.Fatal(err)
	}
	variants := map[string]string{
		"compact":              string(compact),
		"extra space":          strings.Replace(rec, `"path": `, `"path":  `, 1),
		"tab indent":           strings.Replace(rec, `      "kind"`, "\t\"kind\"", 1),
		"escaped letter":       strings.Replace(rec, `"reports"`, `"r\u0065ports"`, 1),
		"escaped slash":        strings.Replace(rec, `"report.html"`, `"report\/x.html"`, 1),
		"empty optional":       strings.Replace(rec, `      "sha256"`, "      \"url\": \"\",\n      \"sha256\"", 1),
		"members reordered":    strings.Replace(strings.Replace(rec, "      \"kind\": \"generated\",\n", "", 1), `"sha256"`, "\"kind\": \"generated\",\n      \"sha256\"", 1),
		"fractional second":    strings.Replace(rec, `12:10:00Z"`, `12:10:00.000Z"`, 1),
		"numeric offset":       strings.Replace(rec, `12:10:00Z"`, `12:10:00+00:00"`, 1),
		"null optional string": strings.Replace(rec, `      "sha256"`, "      \"url\": null,\n      \"sha256\"", 1),
		"unescaped U+2028":     strings.Replace(rec, `"report.html"`, "\"report\u2028.html\"", 1),
	}
	for name, v := range variants {
		t.Run(name, func(t *testing.T) {
			if v == rec {
				t.Fatal("the variant did not change the record")
			}
			var memo canonMemo
			var got Output
			if parseCanonical([]byte(v), &got, &memo) != 0 {
				t.Fatalf("accepted:\n%s", v)
			}
			doc := strings.Replace(string(must(Encode(&Catalog{SchemaVersion: 4, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt,
				Outputs: []Output{o}}))), rec, v, 1)
			var outs []Output
			_, _, canonical, err := ScanCanonical(strings.NewReader(doc), func(o *Output) error { outs = append(outs, *o); return nil })
			if err != nil {
				if name == "null optional string" || name == "unescaped U+2028" || name == "escaped slash" {
					return // a different record (or refused), but never a canonical one
				}
				t.Fatalf("Scan: %v", err)
			}
			if canonical {
				t.Fatal("ScanCanonical reported the document canonical")
			}
			if name == "escaped slash" || name == "unescaped U+2028" {
				return // another path: only the layout verdict matters
			}
			if diff := cmp.Diff([]Output{o}, outs); diff != "" {
				t.Fatalf("general path decoded another record (-want +got):\n%s", diff)
			}
			if name != "compact" {
				return
			}
			// Splice decodes a record it cannot recognise: the same
			// document as ApplyTo's.
			var spliced, applied bytes.Buffer
			e := &Edit{Header: Header{CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}}
			if _, err := e.ApplyTo(strings.NewReader(doc), &spliced, true); err != nil {
				t.Fatalf("Splice: %v", err)
			}
			if _, err := e.ApplyTo(strings.NewReader(doc), &applied, false); err != nil || !bytes.Equal(spliced.Bytes(), applied.Bytes()) {
				t.Fatalf("Splice differs from ApplyTo (%v):\n%s", err, cmp.Diff(applied.String(), spliced.String()))
			}
		})
	}
}

func TestScanCanonicalOfEncodedDocument(t *testing.T) {
	c := randomCatalog(rand.New(rand.NewPCG(3, 4)), 50)
	_, n, canonical, err := ScanCanonical(bytes.NewReader(must(Encode(c))), func(*Output) error { return nil })
	if err != nil || n != 50 || !canonical {
		t.Fatalf("n %d canonical %v err %v, want 50 true nil", n, canonical, err)
	}
}

// TestSpliceOfAnotherLayout: a base in another layout is spliced as
// ApplyTo applies it (records decoded where they cannot be copied), and a
// base that is not a valid catalog is refused.
func TestSpliceOfAnotherLayout(t *testing.T) {
	c := randomCatalog(rand.New(rand.NewPCG(3, 4)), 5)
	doc := must(Encode(c))
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	for name, other := range map[string][]byte{
		"compact":           must(json.Marshal(v)),
		"4-space indent":    must(json.MarshalIndent(v, "", "    ")),
		"member after list": bytes.Replace(doc, []byte("\n  ]\n}\n"), []byte("\n  ],\n  \"x\": 1\n}\n"), 1),
		"trailing data":     append(append([]byte(nil), doc...), "{}"...),
	} {
		add := c.Outputs[2]
		add.Path += ".new"
		e := &Edit{Header: c.Header(), Put: []Output{add}}
		var spliced bytes.Buffer
		_, err := e.ApplyTo(bytes.NewReader(other), &spliced, true)
		if _, perr := Parse(other); perr != nil {
			if err == nil {
				t.Errorf("%s: Splice accepted an invalid base", name)
			}
			continue
		}
		var applied bytes.Buffer
		if _, aerr := e.ApplyTo(bytes.NewReader(doc), &applied, false); err != nil || aerr != nil || !bytes.Equal(spliced.Bytes(), applied.Bytes()) {
			t.Errorf("%s: Splice (%v) differs from ApplyTo on Encode's layout (%v):\n%s", name, err, aerr, cmp.Diff(applied.String(), spliced.String()))
		}
	}
}
