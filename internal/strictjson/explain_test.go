package strictjson

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

type file struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

type manifest struct {
	ID    string `json:"id"`
	Files []file `json:"files"`
}

func TestField(t *testing.T) {
	for ptr, want := range map[jsontext.Pointer]string{
		"":                   "",
		"/files":             "files",
		"/files/3/size":      "files[3].size",
		"/ops/0/record/Path": "ops[0].record.Path",
		"/a b/x":             `["a b"].x`,
		"/x/a~1b":            `x["a/b"]`,
		"/0":                 "[0]",
	} {
		if got := Field(ptr); got != want {
			t.Errorf("Field(%q) = %q, want %q", ptr, got, want)
		}
	}
}

// TestDescribe: every kind of strict-decoding error reads as
// `field value: reason`, with the position of a syntax error.
func TestDescribe(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"wrong type", `{"files":[{"path":"a","size":"1"}]}`, `files[0].size: must be an integer, got a string`},
		{"fraction", `{"files":[{"path":"a","size":1.5}]}`, `files[0].size 1.5: must be an integer`},
		{"out of range", `{"files":[{"size":99999999999999999999}]}`, `files[0].size 99999999999999999999: is out of range`},
		{"array for object", `{"files":[[]]}`, `files[0]: must be an object, got an array`},
		{"document", `"x"`, `the document must be a JSON object, got a string`},
		{"unknown", `{"files":[{"path":"a","mode":1}]}`, `files[0]: unknown field "mode"`},
		{"unknown top-level", `{"mode":1}`, `unknown field "mode"`},
		{"duplicate", `{"id":"a","files":[],"id":"b"}`, `id: duplicate field`},
		{"invalid UTF-8", "{\"id\":\"a\xffb\"}", `id "a\xffb": is not valid UTF-8`},
		{"invalid UTF-8 name", "{\"i\xffd\":\"a\"}", `has a member name "i\xffd" that is not valid UTF-8`},
		{"lone surrogate", `{"id":"x\ud800"}`, `id "x\ud800": has an unpaired escaped UTF-16 surrogate \ud800 (not a character)`},
		{"escaped quote before surrogate", `{"id":"\"\\\"\udc00"}`, `id "\"\\\"\udc00": has an unpaired escaped UTF-16 surrogate \udc00 (not a character)`},
		{"trailing", "{\"id\":\"a\"}\n\n  {}", `invalid JSON at line 3, column 3: unexpected data after top-level value`},
		{"truncated", "{\"id\":\n\"a", `id: invalid JSON at line 2, column 3: unexpected end of input`},
		{"empty", "", `invalid JSON at line 1, column 1: unexpected end of input`},
		{"grammar", `{"id" "a"}`, `id: invalid JSON at line 1, column 7: invalid character '"' after object name (expecting ':')`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var m manifest
			err := Unmarshal([]byte(tt.in), &m)
			e := Explain(err, []byte(tt.in))
			if e == nil {
				t.Fatalf("%s accepted", tt.in)
			}
			if e.Error() != tt.want {
				t.Errorf("Describe(%v)\n = %s\nwant %s", err, e, tt.want)
			}
			if !errors.Is(e, err) {
				t.Errorf("the described error does not wrap the original")
			}
		})
	}
}

// TestDescribeStream: on a stream there is no input to quote from: the
// position is a byte offset, and the rules are still named.
func TestDescribeStream(t *testing.T) {
	dec := NewDecoder(strings.NewReader(`[{"path":"a"},{"path":"b\ud800"}]`))
	if _, err := dec.ReadToken(); err != nil {
		t.Fatal(err)
	}
	var f file
	if err := UnmarshalDecode(dec, &f); err != nil {
		t.Fatal(err)
	}
	err := UnmarshalDecode(dec, &f)
	if got, want := Explain(err, nil).Error(), `[1].path: has an unpaired escaped UTF-16 surrogate (not a character)`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	dec = NewDecoder(strings.NewReader(`[{"path":`))
	dec.ReadToken()
	err = UnmarshalDecode(dec, &f)
	if got := Explain(err, nil).Error(); !strings.Contains(got, "unexpected end of input") || !strings.Contains(got, "byte offset") {
		t.Errorf("truncated stream: %s", got)
	}
	if got := Explain(io.ErrClosedPipe, nil).Error(); got != io.ErrClosedPipe.Error() {
		t.Errorf("an I/O error is kept as it is: %s", got)
	}
	if Explain(nil, nil) != nil {
		t.Error("Describe(nil) is not nil")
	}
}
