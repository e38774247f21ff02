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
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

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

// Error is a strict-decoding error as distributor reports a document's
// problems: which field, which value, what is wrong, where. Unmarshal returns
// it; Explain builds it from other errors of a strict read.
type Error struct {
	Field  string // such as "files[3].size"; empty for the whole document
	Value  string // as shown to people (Go-quoted if not UTF-8, shortened), or empty
	Reason string // for example "duplicate field"
	Offset int64  // in the input, or -1
	// Line and Column (1-based, column in bytes) locate Offset when the
	// input was at hand; both 0 otherwise.
	Line, Column int
	Syntax       bool  // a grammar error: the position is part of the message
	Err          error // the underlying error

	invalidText bool
}

// Detail is the message without the field and the value: the reason, and
// where a syntax error is.
func (e *Error) Detail() string {
	switch {
	case !e.Syntax:
		return e.Reason
	case e.Line > 0:
		return fmt.Sprintf("invalid JSON at line %d, column %d: %s", e.Line, e.Column, e.Reason)
	case e.Offset >= 0:
		return fmt.Sprintf("invalid JSON at byte offset %d: %s", e.Offset, e.Reason)
	}
	return "invalid JSON: " + e.Reason
}

// Error formats the problem as `field value: detail`, for example
// `files[3].size "1": must be an integer, got a string` or
// `invalid JSON at line 2, column 8: unexpected end of input`.
func (e *Error) Error() string {
	head := e.Field
	if e.Value != "" {
		head = strings.TrimPrefix(head+" "+e.Value, " ")
	}
	if head == "" {
		return e.Detail()
	}
	return head + ": " + e.Detail()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether e is about the text itself (target ErrInvalidText):
// bytes that are not UTF-8, an unpaired surrogate escape.
func (e *Error) Is(target error) bool { return target == ErrInvalidText && e.invalidText }

// Explain explains err, from a strict read of data (the whole input, or nil
// for a stream: byte offsets, no string values shown), as an *Error. Another
// error (a stream's I/O) is kept as the reason; an *Error or nil is returned.
func Explain(err error, data []byte) *Error {
	if err == nil {
		return nil
	}
	if described, ok := errors.AsType[*Error](err); ok {
		return described
	}
	e := &Error{Offset: -1, Err: err}
	if sy, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		e.Offset, e.Field = sy.ByteOffset, Field(sy.JSONPointer)
		describeSyntactic(e, sy, data)
	} else if se, ok := errors.AsType[*json.SemanticError](err); ok {
		e.Offset, e.Field = se.ByteOffset, Field(se.JSONPointer)
		describeSemantic(e, se)
	} else if errors.Is(err, io.ErrUnexpectedEOF) {
		e.Syntax, e.Reason = true, "unexpected end of input"
	} else {
		e.Reason = err.Error()
	}
	if data != nil && e.Offset >= 0 && e.Offset <= int64(len(data)) {
		e.Line, e.Column = LineColumn(data, e.Offset)
	}
	return e
}

func describeSyntactic(e *Error, sy *jsontext.SyntacticError, data []byte) {
	switch {
	case errors.Is(sy.Err, jsontext.ErrDuplicateName):
		e.Reason = "duplicate field"
		return
	case errors.Is(sy.Err, io.ErrUnexpectedEOF):
		e.Syntax, e.Reason = true, "unexpected end of input"
		return
	case data != nil && sy.JSONPointer == "" && sy.ByteOffset > 0 && sy.ByteOffset <= int64(len(data)) &&
		jsontext.Value(bytes.TrimSpace(data[:sy.ByteOffset])).IsValid():
		e.Syntax, e.Reason = true, "unexpected data after top-level value"
		return
	}
	// Inside a string: say what is wrong with it, from the bytes themselves.
	if lit, name, ok := stringAt(data, sy.ByteOffset); ok {
		reason := ""
		body := lit[1 : len(lit)-1]
		if !utf8.Valid(body) {
			reason = "is not valid UTF-8"
		} else if esc := loneSurrogate(body); esc != "" {
			reason = "has an unpaired escaped UTF-16 surrogate " + esc + " (not a character)"
		}
		if reason != "" {
			e.invalidText = true
			if name {
				// The pointer names the object; the bad text is a member name.
				e.Reason = "has a member name " + showLiteral(lit) + " that " + reason
				return
			}
			e.Value, e.Reason = showLiteral(lit), reason
			return
		}
	}
	msg := sy.Err.Error()
	switch {
	case data == nil && strings.Contains(msg, "UTF-8"):
		e.invalidText, e.Reason = true, "is not valid UTF-8"
	case data == nil && strings.Contains(msg, "surrogate"):
		e.invalidText, e.Reason = true, "has an unpaired escaped UTF-16 surrogate (not a character)"
	default:
		e.Syntax, e.Reason = true, msg
	}
}

func describeSemantic(e *Error, se *json.SemanticError) {
	switch {
	case errors.Is(se.Err, json.ErrUnknownName):
		e.Field = Field(se.JSONPointer.Parent())
		e.Reason = "unknown field " + Quote(se.JSONPointer.LastToken())
	case errors.Is(se.Err, strconv.ErrRange):
		e.Value, e.Reason = string(se.JSONValue), "is out of range"
	case se.JSONKind == '0' && errors.Is(se.Err, strconv.ErrSyntax) && isInteger(se.GoType):
		e.Value, e.Reason = string(se.JSONValue), "must be an integer"
	case se.Err == nil && se.JSONKind != 0 && se.GoType != nil:
		want, subject := goKind(se.GoType), ""
		if e.Field == "" {
			// The document as a whole: say it is JSON that is expected.
			want, subject = strings.Replace(want, "an object", "a JSON object", 1), "the document "
		}
		e.Reason = subject + "must be " + want + ", got " + jsonKind(se.JSONKind)
	default:
		if v := se.JSONValue; len(v) > 0 && len(v) <= maxShown {
			e.Value = string(v)
		}
		switch {
		case se.Err != nil:
			e.Reason = se.Err.Error()
		case se.GoType != nil:
			e.Reason = "cannot be read as " + goKind(se.GoType)
		default:
			e.Reason = se.Error()
		}
	}
}

// Field turns a JSON pointer into a field path: "/files/3/size" is
// "files[3].size". A token of digits is an index (distributor's documents have
// no such member names); a name not an identifier is quoted, as in `x["a b"]`.
func Field(p jsontext.Pointer) string {
	f := ""
	for tok := range p.Tokens() {
		switch {
		case tok != "" && len(tok) <= 18 && strings.Trim(tok, "0123456789") == "": // an index
			tok = "[" + tok + "]"
		case !isIdent(tok):
			tok = "[" + Quote(tok) + "]"
		}
		f = JoinField(f, tok)
	}
	return f
}

// JoinField names the field child ("size", "[3]", or "" for parent itself)
// of parent ("" for the document), as Field does.
func JoinField(parent, child string) string {
	if parent == "" || child == "" || child[0] == '[' {
		return parent + child
	}
	return parent + "." + child
}

// LineColumn converts a byte offset in data to a 1-based line and column
// (the column counts bytes).
func LineColumn(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// maxShown bounds a value shown in a message, in bytes.
const maxShown = 96

// Quote Go-quotes s for a message, shortened when long.
func Quote(s string) string {
	if len(s) <= maxShown {
		return strconv.Quote(s)
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("…(%d bytes)", len(s))
}

// showLiteral shows a JSON string literal as written when valid UTF-8
// (escapes such as \ud800 stay visible), else Go-quoted.
func showLiteral(lit []byte) string {
	if utf8.Valid(lit) && len(lit) <= maxShown {
		return string(lit)
	}
	return Quote(string(lit[1 : len(lit)-1]))
}

// stringAt finds the string literal (quotes included) containing offset off
// of data (accepted up to off) and whether it is a member name. Inside a
// string every quote is escaped: the first unescaped one before off opens it.
func stringAt(data []byte, off int64) (lit []byte, name, ok bool) {
	if data == nil || off < 0 || off > int64(len(data)) {
		return nil, false, false
	}
	open := unescapedQuote(data, min(int(off), len(data)-1), -1)
	if open < 0 {
		return nil, false, false
	}
	end := unescapedQuote(data, open+1, 1)
	if end < int(off) {
		return nil, false, false
	}
	rest := bytes.TrimLeft(data[end+1:], " \t\r\n")
	return data[open : end+1], len(rest) > 0 && rest[0] == ':', true
}

// unescapedQuote returns the index of the first quote of data from i on,
// stepping by step, not escaped by an odd run of backslashes, or -1.
func unescapedQuote(data []byte, i, step int) int {
	for ; i >= 0 && i < len(data); i += step {
		if data[i] != '"' {
			continue
		}
		j := i
		for j > 0 && data[j-1] == '\\' {
			j--
		}
		if (i-j)%2 == 0 {
			return i
		}
	}
	return -1
}

// loneSurrogate returns the first \uXXXX escape in the body of a JSON
// string literal that is a UTF-16 surrogate not part of a valid pair.
func loneSurrogate(body []byte) string {
	for i := 0; i+1 < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		if body[i+1] != 'u' || i+6 > len(body) {
			i++ // skip the escaped character
			continue
		}
		r, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		if err != nil {
			return ""
		}
		if utf16.IsSurrogate(rune(r)) {
			var r2 uint64 // the escape after it, if any: a low surrogate makes a pair
			if i+12 <= len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
				r2, _ = strconv.ParseUint(string(body[i+8:i+12]), 16, 16)
			}
			if utf16.DecodeRune(rune(r), rune(r2)) == utf8.RuneError {
				return string(body[i : i+6])
			}
			i += 6
		}
		i += 5
	}
	return ""
}

// isIdent reports whether tok is an ASCII letter or _, then letters, digits, _ and -.
func isIdent(tok string) bool {
	const first = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
	return tok != "" && strings.IndexByte(first, tok[0]) >= 0 && strings.Trim(tok[1:], first+"0123456789-") == ""
}

func isInteger(t reflect.Type) bool {
	if t == nil {
		return false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return reflect.Int <= t.Kind() && t.Kind() <= reflect.Uintptr // the integer kinds
}

// goKind names what a Go type reads from JSON.
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch s, ok := goKinds[t.Kind()]; {
	case t == reflect.TypeFor[jsontext.Value]():
		return "a JSON value"
	case t.PkgPath() == "time" && t.Name() == "Time":
		return "an RFC 3339 timestamp string"
	case isInteger(t):
		return "an integer"
	case ok:
		return s
	}
	return t.String()
}

var goKinds = map[reflect.Kind]string{
	reflect.String: "a string", reflect.Bool: "a boolean",
	reflect.Float32: "a number", reflect.Float64: "a number",
	reflect.Slice: "an array", reflect.Array: "an array",
	reflect.Struct: "an object", reflect.Map: "an object",
}

// jsonKind names the JSON kind k ("a string", "null", ...).
func jsonKind(k jsontext.Kind) string { return cmp.Or(jsonKinds[k], "an invalid value") }

var jsonKinds = map[jsontext.Kind]string{
	'n': "null", 'f': "a boolean", 't': "a boolean", '"': "a string",
	'0': "a number", '{': "an object", '[': "an array",
}

// KindName names the JSON kind of the value v starts with ("a string",
// "null", "an object", ...), for callers that check kinds themselves.
func KindName(v jsontext.Value) string { return jsonKind(v.Kind()) }
