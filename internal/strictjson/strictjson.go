// Package strictjson is the one JSON reader for every document distributor
// reads (bundle manifest, catalog, journal): strict by construction, on top
// of github.com/go-json-experiment/json (the module that mirrors Go's
// encoding/json/v2 and aliases it once the standard library ships it).
//
// Strict means: invalid UTF-8 and unpaired UTF-16 surrogate escapes are
// errors (never repaired to U+FFFD), an object member name that appears
// twice is an error, a member no Go field declares is an error, member
// names match case-sensitively, and nothing but white space may follow
// the document. Required members are the callers' business (pointer
// fields, then a check).
package strictjson

import (
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

// Unmarshal decodes the single JSON document data into v, strictly.
func Unmarshal(data []byte, v any) error {
	return json.Unmarshal(data, v, options())
}

// NewDecoder returns a strict streaming decoder reading from r, for
// documents too large to hold whole (the catalog): read tokens with
// ReadToken and decode values in place with UnmarshalDecode.
func NewDecoder(r io.Reader) *jsontext.Decoder {
	return jsontext.NewDecoder(r, options())
}

// UnmarshalDecode decodes the next JSON value of dec into v, strictly.
func UnmarshalDecode(dec *jsontext.Decoder, v any) error {
	return json.UnmarshalDecode(dec, v, options())
}
