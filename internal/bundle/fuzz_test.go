package bundle

import (
	"bytes"
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
		// The fast path accepts only what the thorough parser accepts,
		// with the same result.
		if fast, ok := parseManifestFast(data); ok {
			slow, err := parseManifestThorough(data)
			if err != nil {
				t.Fatalf("fast path accepted what the thorough parser refuses (%v)\ninput: %q", err, data)
			}
			if diff := cmp.Diff(slow, fast); diff != "" {
				t.Fatalf("fast and thorough parses differ (-thorough +fast):\n%s", diff)
			}
		}
		m, err := ParseManifest(data)
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
