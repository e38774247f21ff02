package bundle

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(doc(nil)))
	f.Add([]byte(doc(func(s *docSpec) { s.Created = `"2026-06-19T12:00:00.5+01:30"` })))
	f.Add([]byte(doc(withPath("a/../b"))))
	f.Add([]byte(doc(withRawPath(`"\u00e9\ud83d\ude00"`))))
	f.Add([]byte(doc(withRawPath(`"a\ud800"`))))
	f.Add([]byte(doc(rawFiles(`[]`))))
	f.Add([]byte(doc(func(s *docSpec) { s.Extra = `"x": [{"y": null}]` })))
	f.Add([]byte(`{"schema_version": 1e400}`))
	f.Add([]byte(`{"files": [[[[]]]]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The one-pass parser accepts only what the thorough parser it
		// replaced accepts, with the same result, and names the same
		// problems otherwise.
		m, err := ParseManifest(data)
		slow, serr := referenceParseManifest(data)
		if (err == nil) != (serr == nil) || (err != nil && !sameProblems(err, serr)) {
			t.Fatalf("ParseManifest: %v\nthe thorough parser: %v\ninput: %q", err, serr, data)
		}
		if diff := cmp.Diff(slow, m); err == nil && diff != "" {
			t.Fatalf("one-pass and thorough parses differ (-thorough +one-pass):\n%s", diff)
		}
		if err != nil {
			if m != nil {
				t.Fatalf("manifest returned with error %v", err)
			}
			if err.Error() == "" {
				t.Fatalf("empty error text")
			}
			return
		}
		enc, err := EncodeManifest(m)
		if err != nil {
			t.Fatalf("accepted manifest does not encode: %v\ninput: %q", err, data)
		}
		back, err := ParseManifest(enc)
		if err != nil {
			t.Fatalf("encoded manifest does not parse: %v\nencoded:\n%s", err, enc)
		}
		if diff := cmp.Diff(m, back); diff != "" {
			t.Fatalf("round trip changed the manifest (-first +second):\n%s", diff)
		}
		enc2, err := EncodeManifest(back)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable: %v\n%s\n---\n%s", err, enc, enc2)
		}
	})
}

// sameProblems reports whether two ParseManifest errors name the same
// problems. A problem with the JSON text stops both parsers, but not
// always with the same words: the streaming decoder and a whole-document
// decode meet some errors at different bytes ("{{": a name that is not a
// string, or the end of the input).
func sameProblems(a, b error) bool {
	var ea, eb *ManifestError
	if !errors.As(a, &ea) || !errors.As(b, &eb) {
		return false
	}
	if len(ea.Problems) == 1 && len(eb.Problems) == 1 && (textProblem(ea.Problems[0]) || textProblem(eb.Problems[0])) {
		return textProblem(ea.Problems[0]) && textProblem(eb.Problems[0])
	}
	return a.Error() == b.Error()
}

// textProblem reports whether p is about the JSON text itself.
func textProblem(p ManifestProblem) bool {
	for _, s := range []string{"invalid JSON", "not valid UTF-8", "unpaired escaped UTF-16 surrogate", "duplicate field", "member name"} {
		if strings.Contains(p.Reason, s) {
			return true
		}
	}
	return false
}
