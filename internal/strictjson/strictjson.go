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
	"fmt"
	"io"
	"strconv"
	"strings"

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
	return Describe(json.Unmarshal(data, v, options()))
}

// NewDecoder returns a strict streaming decoder reading from r, for
// documents too large to hold whole (the catalog): read tokens with
// ReadToken and decode values in place with UnmarshalDecode.
func NewDecoder(r io.Reader) *jsontext.Decoder {
	return jsontext.NewDecoder(r, options())
}

// UnmarshalDecode decodes the next JSON value of dec into v, strictly.
func UnmarshalDecode(dec *jsontext.Decoder, v any) error {
	return Describe(json.UnmarshalDecode(dec, v, options()))
}

// ErrInvalidText is matched (errors.Is) by errors about the text itself
// rather than its structure: invalid UTF-8 and unpaired surrogate escapes,
// which a lenient reader would silently repair to U+FFFD.
var ErrInvalidText = errors.New("not valid Unicode")

// Describe rewrites an error of this package's decoders (or of a
// jsontext.Decoder it returned) so that it names the field it is about in
// the project's notation, e.g. `outputs[3].size: ...` or
// `files[0]: unknown field "owner"`, keeping the underlying error for
// errors.Is. Other errors and nil are returned as they are.
func Describe(err error) error {
	var se *json.SemanticError
	var xe *jsontext.SyntacticError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && errors.Is(se.Err, json.ErrUnknownName):
		return at(Field(se.JSONPointer.Parent()), fmt.Errorf("unknown field %q: %w", se.JSONPointer.LastToken(), json.ErrUnknownName))
	case errors.As(err, &se) && se.Err == nil:
		what := "a value of another type"
		if se.GoType != nil {
			what = se.GoType.String()
		}
		return at(Field(se.JSONPointer), fmt.Errorf("JSON %s where %s belongs: %w", kind(se.JSONKind), what, err))
	case errors.As(err, &se):
		return at(Field(se.JSONPointer), se.Err)
	case errors.As(err, &xe) && errors.Is(xe.Err, jsontext.ErrDuplicateName):
		return at(Field(xe.JSONPointer.Parent()), fmt.Errorf("field %q appears twice: %w", xe.JSONPointer.LastToken(), jsontext.ErrDuplicateName))
	case errors.As(err, &xe) && strings.Contains(xe.Err.Error(), "invalid UTF-8"):
		return at(Field(xe.JSONPointer), fmt.Errorf("%w: not valid UTF-8 (at byte %d)", ErrInvalidText, xe.ByteOffset))
	case errors.As(err, &xe) && strings.Contains(xe.Err.Error(), "surrogate"):
		return at(Field(xe.JSONPointer), fmt.Errorf("%w: an unpaired escaped UTF-16 surrogate (\\uD800-\\uDFFF) (at byte %d)", ErrInvalidText, xe.ByteOffset))
	case errors.As(err, &xe):
		return at(Field(xe.JSONPointer), fmt.Errorf("%w (at byte %d)", xe.Err, xe.ByteOffset))
	}
	return err
}

func at(field string, err error) error {
	if field == "" {
		return err
	}
	return fmt.Errorf("%s: %w", field, err)
}

func kind(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// Field renders a JSON pointer in the project's field notation:
// /outputs/3/source/id is outputs[3].source.id; the root is "".
func Field(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && b.Len() > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}
