// Package strictjson is the one JSON reader for every document distributor
// reads (bundle manifest, catalog, journal): strict by construction, on top
// of github.com/go-json-experiment/json (the module that mirrors Go's
// encoding/json/v2 and aliases it once the standard library ships it).
//
// Strict means: invalid UTF-8 and unpaired escaped UTF-16 surrogates are
// errors (never repaired to U+FFFD), an object member name that appears
// twice is an error, a member no Go field declares is an error, member
// names match case-sensitively, and nothing but white space may follow
// the document. Required members are the callers' business (pointer
// fields, then a check). JSON null is accepted for any Go value (it leaves
// the zero value): a caller that must tell null from a value reads the
// member as a jsontext.Value.
//
// A struct that declares an embedded fallback (a jsontext.Value field
// tagged `json:",embed"`) receives the members no field declares instead
// of failing at the first; the caller must then refuse them itself (the
// manifest does, to report every unknown member at once).
//
// Describe turns the errors of a strict read into messages in the
// project's style, naming the field path: `files[3].size "1": must be an
// integer, got a string`, `ops[0].path: duplicate field`.
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

// Describe rewrites an error of this package's decoders (or of a
// jsontext.Decoder it returned) as an *Error that names the field it is
// about in the project's notation, e.g. `outputs[3].size: must be an
// integer, got a string` or `files[0]: unknown field "owner"`, keeping the
// underlying error for errors.Is and errors.As. Other errors (I/O errors
// of a stream) and nil are returned as they are. With the input at hand,
// Explain says more (line and column, the offending value).
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
