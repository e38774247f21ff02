package bundle

import (
	"bytes"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/distributor-dev/distributor/internal/strictjson"
	"github.com/go-json-experiment/json/jsontext"
)

// parseManifestFast reads a well-formed, valid manifest in one streaming
// pass over its tokens, with the strict reader's options (duplicate
// names, invalid UTF-8 and unpaired surrogates are refused by the
// decoder). It returns ok false at the first thing it does not expect, or
// when the manifest breaks a rule: ParseManifest then reads it again the
// thorough way, which names every problem. A manifest of 2,000 files
// otherwise costs 6,000 nested decodes and maps there (most of a no-op
// run's time in the bundle).
func parseManifestFast(data []byte) (m *Manifest, ok bool) {
	dec := strictjson.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	m = &Manifest{}
	var seenVersion, seenID, seenCreated, seenDigest, seenFiles bool
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		switch string(name) { // raw: an escaped name is left to the thorough parser
		case `"schema_version"`:
			n, ok := readInt(dec)
			if !ok || n != SchemaVersion {
				return nil, false
			}
			m.SchemaVersion, seenVersion = int(n), true
		case `"id"`:
			if m.ID, ok = readString(dec); !ok {
				return nil, false
			}
			seenID = true
		case `"created"`:
			s, ok := readString(dec)
			if !ok {
				return nil, false
			}
			t, err := parseRFC3339(s)
			if err != nil {
				return nil, false
			}
			m.Created, seenCreated = t.UTC(), true
		case `"digest"`:
			if m.Digest, ok = readString(dec); !ok {
				return nil, false
			}
			seenDigest = true
		case `"files"`:
			if m.Files, ok = readFiles(dec); !ok {
				return nil, false
			}
			seenFiles = true
		default:
			return nil, false
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF { // nothing may follow
		return nil, false
	}
	if !seenVersion || !seenID || !seenCreated || !seenDigest || !seenFiles {
		return nil, false
	}
	slices.SortStableFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	if len(m.validate(true)) > 0 {
		return nil, false
	}
	return m, true
}

// readFiles reads the files array: objects of exactly path, sha256 and
// size.
func readFiles(dec *jsontext.Decoder) ([]File, bool) {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	var files []File
	for dec.PeekKind() != ']' {
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return nil, false
		}
		var f File
		var seenPath, seenSHA, seenSize, ok bool
		for dec.PeekKind() != '}' {
			name, err := dec.ReadValue()
			if err != nil {
				return nil, false
			}
			switch string(name) {
			case `"path"`:
				f.Path, ok = readString(dec)
				seenPath = true
			case `"sha256"`:
				f.SHA256, ok = readString(dec)
				seenSHA = true
			case `"size"`:
				f.Size, ok = readInt(dec)
				seenSize = true
			default:
				return nil, false
			}
			if !ok {
				return nil, false
			}
		}
		if _, err := dec.ReadToken(); err != nil || !seenPath || !seenSHA || !seenSize {
			return nil, false
		}
		files = append(files, f)
	}
	if _, err := dec.ReadToken(); err != nil { // ']'
		return nil, false
	}
	return files, true
}

// readString reads a string value (valid UTF-8, its escapes checked, by
// the decoder).
func readString(dec *jsontext.Decoder) (string, bool) {
	v, err := dec.ReadValue()
	if err != nil || v.Kind() != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	s, err := jsontext.AppendUnquote(nil, v)
	return string(s), err == nil
}

// readInt reads a JSON number written as a plain integer.
func readInt(dec *jsontext.Decoder) (int64, bool) {
	v, err := dec.ReadValue()
	if err != nil || v.Kind() != '0' || bytes.ContainsAny(v, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}
