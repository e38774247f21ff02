package strictjson

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type doc struct {
	A string `json:"a"`
	B *int   `json:"b"`
}

func TestUnmarshalRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"duplicate key":  `{"a":"x","a":"y"}`,
		"lone surrogate": `{"a":"\ud800"}`,
		"low surrogate":  `{"a":"\udc00x"}`,
		"invalid utf-8":  "{\"a\":\"\xff\"}",
		"trailing data":  `{"a":"x"} {}`,
		"unknown field":  `{"a":"x","c":1}`,
		"case folding":   `{"A":"x"}`,
		"not an object":  `[1]`,
	} {
		var d doc
		if err := Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("%s: %s accepted as %+v", name, in, d)
		}
	}
}

func TestUnmarshalAccepts(t *testing.T) {
	var d doc
	if err := Unmarshal([]byte(" {\"a\":\"\\ud83d\\ude00 \u00e9\",\"b\":3}\n"), &d); err != nil {
		t.Fatal(err)
	}
	if d.A != "\U0001F600 é" || d.B == nil || *d.B != 3 {
		t.Fatalf("got %+v", d)
	}
}

func TestDecoderStreamsStrictly(t *testing.T) {
	dec := NewDecoder(strings.NewReader(`[{"a":"x"},{"a":"y","a":"z"}]`))
	if _, err := dec.ReadToken(); err != nil {
		t.Fatal(err)
	}
	var d doc
	if err := UnmarshalDecode(dec, &d); err != nil || d.A != "x" {
		t.Fatalf("first element: %+v, %v", d, err)
	}
	if err := UnmarshalDecode(dec, &d); err == nil {
		t.Fatal("duplicate key in the second element accepted")
	}
}

func TestDescribeNamesTheField(t *testing.T) {
	type file struct {
		Path string `json:"path"`
		Size *int64 `json:"size"`
	}
	type manifest struct {
		Files []file `json:"files"`
	}
	for in, want := range map[string]string{
		`{"files":[{"path":"a"},{"path":"b","owner":1}]}`: `files[1]: unknown field "owner"`,
		`{"files":[{"path":"a","path":"b"}]}`:             `files[0].path: duplicate field`,
		`{"files":[{"path":"a","size":"7"}]}`:             `files[0].size: must be an integer, got a string`,
		`{"files":[{"path":"\ud800"}]}`:                   `files[0].path "\ud800": has an unpaired escaped UTF-16 surrogate`,
		`{"x":1}`:                                         `unknown field "x"`,
	} {
		var m manifest
		err := Unmarshal([]byte(in), &m)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want prefix %q", in, err, want)
		}
	}
}

// UnmarshalDecode decodes the next JSON value of dec into v, strictly. A
// decoding error is an *Error naming the field and the byte offset.
func UnmarshalDecode(dec *jsontext.Decoder, v any) error {
	return Describe(json.UnmarshalDecode(dec, v, options()))
}

// Describe rewrites a decoding error of this package's decoders as an
// *Error naming its field (see Explain, which with the input says more);
// other errors (a stream's I/O errors) and nil are returned as they are.
func Describe(err error) error {
	var se *json.SemanticError
	var xe *jsontext.SyntacticError
	var e *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		return err
	case errors.As(err, &se), errors.As(err, &xe), errors.Is(err, io.ErrUnexpectedEOF):
		return Explain(err, nil)
	}
	return err
}
