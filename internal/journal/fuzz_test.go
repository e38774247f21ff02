package journal

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode: Decode never panics, and a journal it accepts encodes to one
// that decodes to the same journal.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"journal_version":1,"run_id":"r","command":"run","started_at":"2026-06-19T12:00:00Z","base_version":"","ops":[{"op":"delete","path":"a"}]}`))
	f.Add([]byte(`{"journal_version":1,"ops":[{"op":"write","path":"a","sha256":"sha256:` +
		`aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","size":1,"record":{"Path":"a"}}]}`))
	f.Add([]byte(`{"journal_version":1,"ops":[{"op":"delete","path":"a\ud800"}]}`))
	f.Add([]byte(`{"journal_version":1,"journal_version":1}`))
	f.Add([]byte(`{"journal_version":1} {}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := Decode(data)
		if err != nil {
			if j != nil || err.Error() == "" {
				t.Fatalf("journal %v with error %q", j, err)
			}
			return
		}
		enc, err := Encode(j)
		if err != nil {
			return // e.g. a time outside what encoding/json writes
		}
		back, err := Decode(enc)
		if err != nil {
			t.Fatalf("an encoded journal does not decode: %v\n%s", err, enc)
		}
		if diff := cmp.Diff(j, back); diff != "" {
			t.Fatalf("round trip changed the journal (-first +second):\n%s", diff)
		}
	})
}
