package journal

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// validJournal is the encoding of a journal with a write (ops[0]) and a
// delete (ops[1]), the base the strictness cases mutate.
func validJournal(t *testing.T) string {
	t.Helper()
	now := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	rec := catalog.Output{Path: "a.txt", PipelineID: "p", DestinationID: "d", Kind: catalog.KindSource,
		SHA256: "sha256:" + strings.Repeat("a", 64), Size: 3, CreatedAt: now, UpdatedAt: now}
	data, err := Encode(&Journal{RunID: "r1", Command: "run", Started: now, BaseVersion: "v1", Ops: []Op{
		{Op: OpWrite, Path: "a.txt", SHA256: rec.SHA256, Size: 3, Record: &rec},
		{Op: OpDelete, Path: "b.txt"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestDecodeStrict: each strictness rule refuses the journal with a message
// naming the field and the problem. A journal that says two things (a
// member twice), names a path that is not what was written (bytes that are
// not UTF-8, a lone surrogate) or carries more than one document is not
// acted on.
func TestDecodeStrict(t *testing.T) {
	base := validJournal(t)
	replace := func(old, new string) string {
		t.Helper()
		if !strings.Contains(base, old) {
			t.Fatalf("%q not in %s", old, base)
		}
		return strings.Replace(base, old, new, 1)
	}
	for _, tt := range []struct {
		name, doc, want string
	}{
		{"duplicate top-level member", replace(`"run_id":"r1"`, `"run_id":"r1","run_id":"r2"`),
			`run_id: duplicate field`},
		{"duplicate member of an op", replace(`"path":"b.txt"`, `"path":"b.txt","path":"c.txt"`),
			`ops[1].path: duplicate field`},
		{"duplicate member spelled with an escape", replace(`"path":"b.txt"`, `"path":"b.txt","p\u0061th":"c.txt"`),
			`ops[1].path: duplicate field`},
		{"duplicate member of a record", replace(`"Kind":"source"`, `"Kind":"source","Kind":"generated"`),
			`ops[0].record.Kind: duplicate field`},
		{"invalid UTF-8 in a path", replace(`"path":"b.txt"`, "\"path\":\"b\xff.txt\""),
			`ops[1].path "b\xff.txt": is not valid UTF-8`},
		{"invalid UTF-8 in a member name", replace(`"path":"b.txt"`, "\"pa\xffth\":\"b.txt\""),
			`ops[1]: has a member name "pa\xffth" that is not valid UTF-8`},
		{"lone high surrogate", replace(`"path":"b.txt"`, `"path":"b\ud800.txt"`),
			`ops[1].path "b\ud800.txt": has an unpaired escaped UTF-16 surrogate \ud800`},
		{"lone low surrogate", replace(`"path":"b.txt"`, `"path":"b\udfff"`),
			`ops[1].path "b\udfff": has an unpaired escaped UTF-16 surrogate \udfff`},
		{"reversed surrogate pair", replace(`"run_id":"r1"`, `"run_id":"\ude00\ud83d"`),
			`run_id "\ude00\ud83d": has an unpaired escaped UTF-16 surrogate \ude00`},
		{"trailing object", base + `{}`,
			`invalid JSON at line 1, column ` + itoa(len(base)+1) + `: unexpected data after top-level value`},
		{"two journals", base + "\n" + base,
			`unexpected data after top-level value`},
		{"trailing garbage", base + " x",
			`unexpected data after top-level value`},
		{"unknown top-level member", replace(`"run_id":"r1"`, `"run_id":"r1","extra":1`),
			`unknown field "extra"`},
		{"unknown op member", replace(`"path":"b.txt"`, `"path":"b.txt","mode":420`),
			`ops[1]: unknown field "mode"`},
		{"unknown record member", replace(`"Kind":"source"`, `"Kind":"source","Mode":420`),
			`ops[0].record: unknown field "Mode"`},
		{"member name in another case", replace(`"run_id":"r1"`, `"RUN_ID":"r1"`),
			`unknown field "RUN_ID"`},
		{"wrong type", replace(`"size":3`, `"size":"3"`),
			`ops[0].size: must be an integer, got a string`},
		{"fractional size", replace(`"size":3`, `"size":3.5`),
			`ops[0].size 3.5: must be an integer`},
		{"truncated", base[:len(base)/2],
			`unexpected end of input`},
		{"not an object", `[]`,
			`the document must be a JSON object, got an array`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j, err := Decode([]byte(tt.doc))
			if err == nil {
				t.Fatalf("accepted as %+v:\n%s", j, tt.doc)
			}
			if !strings.HasPrefix(err.Error(), "decode journal: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := Decode([]byte(base)); err != nil {
		t.Fatalf("the base journal does not decode: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
