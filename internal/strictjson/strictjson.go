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
// ReadToken and values with ReadValue (Explain describes their errors).
func NewDecoder(r io.Reader) *jsontext.Decoder {
	return jsontext.NewDecoder(r, options())
}

// ErrInvalidText is matched (errors.Is) by errors about the text itself
// rather than its structure: invalid UTF-8 and unpaired surrogate escapes,
// which a lenient reader would silently repair to U+FFFD.
var ErrInvalidText = errors.New("not valid Unicode")
