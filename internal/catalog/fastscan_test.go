package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mutations turn a canonical document into another one, valid or not, by
// changing it at record i (of n) or around it.
var mutations = map[string]func(doc string, recs []string, i int) string{
	"compact record": func(doc string, recs []string, i int) string {
		var b bytes.Buffer
		json.Compact(&b, []byte(recs[i]))
		return strings.Replace(doc, recs[i], b.String(), 1)
	},
	"space before record": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, "\n"+recs[i], "\n "+recs[i], 1)
	},
	"tab inside record": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, recs[i], strings.Replace(recs[i], "      \"kind\"", "\t\"kind\"", 1), 1)
	},
	"header on one line": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, "{\n  \"schema_version\": 4,\n", `{"schema_version":4,`, 1)
	},
	"schema 3": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, `"schema_version": 4`, `"schema_version": 3`, 1)
	},
	"member after outputs": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, "\n  ]\n}\n", "\n  ],\n  \"x\": 1\n}\n", 1)
	},
	"duplicate created_at after outputs": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, "\n  ]\n}\n", "\n  ],\n  \"created_at\": \"2026-06-04T12:00:00Z\"\n}\n", 1)
	},
	"duplicate outputs": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, "\n  ]\n}\n", "\n  ],\n  \"outputs\": []\n}\n", 1)
	},
	"trailing comma": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, "\n    }\n  ]\n}\n", "\n    },\n  ]\n}\n", 1)
	},
	"missing comma": func(doc string, recs []string, i int) string {
		if i+1 >= len(recs) {
			return strings.Replace(doc, "\n  ]\n}\n", "\n  ]\n}", 1) // no final newline: still valid
		}
		return strings.Replace(doc, recs[i]+",", recs[i], 1)
	},
	"trailing data":  func(doc string, recs []string, i int) string { return doc + "{}" },
	"trailing space": func(doc string, recs []string, i int) string { return doc + " \n" },
	"control character": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, recs[i], strings.Replace(recs[i], `"kind": "`, "\"kind\": \"\x01", 1), 1)
	},
	"invalid UTF-8": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, recs[i], strings.Replace(recs[i], `.html"`, ".\xff\"", 1), 1)
	},
	"lone surrogate": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, recs[i], strings.Replace(recs[i], `.html"`, `.\ud800"`, 1), 1)
	},
	"escaped letter": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, recs[i], strings.Replace(recs[i], `"pipeline_id": "p"`, `"pipeline_id": "\u0070"`, 1), 1)
	},
	"duplicate member": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, recs[i], strings.Replace(recs[i], "      \"kind\"", "      \"size\": 1,\n      \"kind\"", 1), 1)
	},
	"truncated": func(doc string, recs []string, i int) string {
		return doc[:strings.Index(doc, recs[i])+len(recs[i])/2]
	},
	"CRLF": func(doc string, recs []string, i int) string { return strings.ReplaceAll(doc, "\n", "\r\n") },
	"bad date": func(doc string, recs []string, i int) string {
		return strings.Replace(doc, recs[i], strings.Replace(recs[i], `"created_at": "2026-06-04`, `"created_at": "2026-02-30`, 1), 1)
	},
}

// TestScanAgreesWithParse: the fast path and the general decoder it hands
// over to, wherever the document departs from Encode's layout, accept
// exactly the documents Parse accepts and decode the same records.
func TestScanAgreesWithParse(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	names := make([]string, 0, len(mutations))
	for name := range mutations {
		names = append(names, name)
	}
	for round := range 400 {
		c := randomCatalog(r, 1+r.IntN(12))
		sorted, _ := Parse(must(Encode(c)))
		var recs []string
		for k := range sorted.Outputs {
			recs = append(recs, strings.TrimPrefix(string(appendOutput(nil, &sorted.Outputs[k])), "\n    "))
		}
		name := names[round%len(names)]
		i := r.IntN(len(recs))
		doc := mutations[name](string(must(Encode(c))), recs, i)
		t.Run(fmt.Sprintf("%s/%d", name, round), func(t *testing.T) {
			want, perr := Parse([]byte(doc))
			var got []Output
			h, n, serr := Scan(strings.NewReader(doc), func(o *Output) error { got = append(got, *o); return nil })
			if (perr == nil) != (serr == nil) {
				t.Fatalf("Parse error %v, Scan error %v, on\n%s", perr, serr, doc)
			}
			if perr != nil {
				return
			}
			if h != want.Header() || n != len(want.Outputs) {
				t.Fatalf("header %+v n %d, want %+v n %d", h, n, want.Header(), len(want.Outputs))
			}
			if diff := cmp.Diff(want.Outputs, got); diff != "" {
				t.Fatalf("records differ (-parse +scan):\n%s\non\n%s", diff, doc)
			}
		})
	}
}

// TestRecordEndIsIndex: recordEnd finds what bytes.Index finds, on records
// and on text made of the bytes the search is about.
func TestRecordEndIsIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte("\n      }},x\"")
	cases := []string{"", "}", "\n    }", "    }", "\n   }", "\n     }", "}\n    }", "\n      },\n    }"}
	for range 5000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := recordEnd([]byte(c)), bytes.Index([]byte(c), []byte(recordClose)); got != want {
			t.Fatalf("recordEnd(%q) = %d, want %d", c, got, want)
		}
	}
}
