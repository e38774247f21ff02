// Package strictjson is the one strict JSON reader for every document
// distributor reads (manifest, catalog, journal), on
// github.com/go-json-experiment/json; what strict means is in docs/design.md
// ("One strict JSON reader"). Required members are the callers' business;
// JSON null leaves the zero value (read a jsontext.Value to tell it apart).
// A struct with an embedded fallback (a jsontext.Value tagged
// `json:",embed"`) receives undeclared members instead of failing, and must
// refuse them itself (the manifest does, to report them all at once).
package strictjson

import (
	"errors"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// options are the decoding options of every strict read.
func options() json.Options {
	return json.JoinOptions(
		json.RejectUnknownMembers(true),
		jsontext.AllowDuplicateNames(false),
		jsontext.AllowInvalidUTF8(false),
	)
}

// Unmarshal decodes the single JSON document data into v, strictly. An
// error is an *Error naming the field, the value and the position in data.
func Unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v, options()); err != nil {
		return Explain(err, data)
	}
	return nil
}

// NewDecoder returns a strict streaming decoder reading from r, for
// documents too large to hold whole (the catalog): read tokens with
// ReadToken and decode values in place with UnmarshalDecode.
func NewDecoder(r io.Reader) *jsontext.Decoder {
	return jsontext.NewDecoder(r, options())
}

// UnmarshalDecode decodes the next JSON value of dec into v, strictly. A
// decoding error is an *Error naming the field and the byte offset.
func UnmarshalDecode(dec *jsontext.Decoder, v any) error {
	return Describe(json.UnmarshalDecode(dec, v, options()))
}

// ErrInvalidText is matched (errors.Is) by errors about the text itself
// rather than its structure: invalid UTF-8 and unpaired surrogate escapes,
// which a lenient reader would silently repair to U+FFFD.
var ErrInvalidText = errors.New("not valid Unicode")

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
