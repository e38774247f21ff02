package bundle

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/distributor-dev/distributor/internal/strictjson"
)

// ParseManifest decodes and validates a manifest.json document strictly:
// unknown or duplicate fields anywhere, wrong JSON types, missing fields,
// trailing data, invalid UTF-8, unpaired surrogate escapes and every rule
// of the manifest contract (including that the digest matches the listed
// files) are errors. It needs no file I/O. The returned manifest's Files
// are sorted by path byte-wise and Created is in UTC. On failure it returns
// a *ManifestError naming every problem found; a problem with the JSON text
// itself (syntax, trailing data, a duplicate field, text that is not valid
// UTF-8) stops the parse and is reported alone.
//
// The document is read in one pass over its tokens with internal/strictjson's
// decoder, which refuses what strict JSON does; a member of the wrong type,
// missing or unknown is noted and the pass goes on, so that every such
// problem is reported together with the contract's.
func ParseManifest(data []byte) (*Manifest, error) {
	m, err := parseManifest(data)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// parseManifest is ParseManifest, except that with problems that leave the
// file list usable (none about files or the document as a whole, such as
// a stale digest or a bad id) it returns the manifest too, so that Load can
// check the files and list their problems with the manifest's.
func parseManifest(data []byte) (*Manifest, *ManifestError) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ManifestError{Problems: []ManifestProblem{{Reason: "document is empty"}}}
	}
	p := &parser{dec: strictjson.NewDecoder(bytes.NewReader(data)), reported: map[string]bool{}}
	m, err := p.manifest(data)
	if err != nil {
		return nil, &ManifestError{Problems: []ManifestProblem{problemOf("", strictjson.Explain(err, data))}}
	}
	// A manifest from a future schema is reported as that alone: its other
	// fields follow rules this version does not know.
	if p.futureVersion {
		return nil, &ManifestError{Problems: p.members[0]}
	}
	var probs []ManifestProblem
	for _, list := range p.members {
		probs = append(probs, list...)
	}
	// A malformed file entry makes a digest mismatch a mere consequence.
	filesMalformed := false
	for f := range p.reported {
		filesMalformed = filesMalformed || strings.HasPrefix(f, "files[")
	}
	for _, vp := range m.validate(!filesMalformed) {
		if !p.alreadyReported(vp.Field) {
			probs = append(probs, vp)
		}
	}
	var merr *ManifestError
	if len(probs) > 0 {
		merr = &ManifestError{Problems: probs}
		for _, p := range probs {
			if p.Field == "" || p.Field == "files" || strings.HasPrefix(p.Field, "files[") {
				return nil, merr
			}
		}
	}
	slices.SortStableFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return m, merr
}

// problemOf turns a strict decoding error of the value at field (empty for
// the document) into a manifest problem.
func problemOf(field string, e *strictjson.Error) ManifestProblem {
	switch {
	case field == "":
		field = e.Field
	case e.Field != "" && e.Field[0] == '[':
		field += e.Field
	case e.Field != "":
		field += "." + e.Field
	}
	return ManifestProblem{Field: field, Value: e.Value, Reason: e.Detail()}
}

// manifestMembers are the members of a manifest, in the order their
// problems are reported; unknown members come after them.
var manifestMembers = [...]string{"schema_version", "id", "created", "digest", "files"}

// parser reads a manifest's tokens, collecting structural problems (types,
// missing and unknown fields) by member. Semantic rules are left to
// (*Manifest).validate. An error it returns is one of the JSON text.
type parser struct {
	dec           *jsontext.Decoder
	members       [len(manifestMembers) + 1][]ManifestProblem // the last: unknown members
	at            int                                         // the member whose problems are added
	reported      map[string]bool                             // fields with a structural problem
	futureVersion bool
}

func (p *parser) add(field, value, reason string) {
	p.members[p.at] = append(p.members[p.at], ManifestProblem{Field: field, Value: value, Reason: reason})
	p.reported[field] = true
}

// alreadyReported reports whether field, or a field containing it, already
// has a structural problem (so a semantic one would only repeat it).
func (p *parser) alreadyReported(field string) bool {
	for f := range p.reported {
		if field == f || strings.HasPrefix(field, f+".") || strings.HasPrefix(field, f+"[") {
			return true
		}
	}
	return false
}

func (p *parser) manifest(data []byte) (*Manifest, error) {
	m := &Manifest{}
	var seen [len(manifestMembers)]bool
	var unknown []string
	tok, err := p.dec.ReadToken()
	switch {
	case err == nil && tok.Kind() == '{':
		err = p.object(func(name []byte) error {
			k := slices.Index(manifestMembers[:], string(name))
			if k < 0 {
				unknown = append(unknown, string(name))
				return p.dec.SkipValue()
			}
			seen[k], p.at = true, k
			return p.member(m, manifestMembers[k])
		})
	case err == nil && tok.Kind() != 'n':
		// Not an object (null reads as one without members).
		var obj struct{}
		err = strictjson.Unmarshal(data, &obj)
	}
	if err != nil {
		return nil, err
	}
	if _, err := p.dec.ReadToken(); err != io.EOF {
		// Trailing data: what strict JSON says of it.
		var v jsontext.Value
		return nil, strictjson.Unmarshal(data, &v)
	}
	for k, name := range manifestMembers {
		if !seen[k] {
			p.at = k
			p.add(name, "", "missing")
		}
	}
	p.at = len(manifestMembers)
	p.unknown("", unknown)
	return m, nil
}

// object reads the members of the object whose '{' was read, calling fn
// with each name (fn reads the value), and its '}'.
func (p *parser) object(fn func(name []byte) error) error {
	for p.dec.PeekKind() != '}' {
		name, err := p.name()
		if err != nil {
			return err
		}
		if err := fn(name); err != nil {
			return err
		}
	}
	_, err := p.dec.ReadToken()
	return err
}

// name reads a member name, valid until the next read.
func (p *parser) name() ([]byte, error) {
	v, err := p.dec.ReadValue()
	switch {
	case err != nil:
		return nil, err
	case bytes.IndexByte(v, '\\') < 0:
		return v[1 : len(v)-1 : len(v)-1], nil
	}
	return jsontext.AppendUnquote(nil, v)
}

// member reads the value of a known top-level member into m.
func (p *parser) member(m *Manifest, name string) error {
	switch name {
	case "schema_version":
		v, ok, err := p.integer(field{-1, name})
		if err != nil || !ok {
			return err
		}
		if v != SchemaVersion {
			p.add(name, strconv.FormatInt(v, 10), unsupportedVersion(v))
			p.futureVersion = v > SchemaVersion
		}
		m.SchemaVersion = int(min(max(v, -1<<31), 1<<31-1))
	case "id":
		s, _, err := p.str(field{-1, name})
		m.ID = s
		return err
	case "created":
		s, ok, err := p.str(field{-1, name})
		if err != nil || !ok {
			return err
		}
		t, perr := parseRFC3339(s)
		if perr != nil {
			p.add(name, quoteValue(s), "is not an RFC 3339 timestamp such as 2026-06-19T12:00:00Z")
		} else {
			m.Created = t.UTC()
		}
	case "digest":
		s, _, err := p.str(field{-1, name})
		m.Digest = s
		return err
	case "files":
		files, err := p.files()
		m.Files = files
		return err
	}
	return nil
}

// files reads the files array.
func (p *parser) files() ([]File, error) {
	if p.dec.PeekKind() != '[' {
		return nil, p.wrongKind(field{-1, "files"}, "an array")
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, err
	}
	var files []File
	for i := 0; p.dec.PeekKind() != ']'; i++ {
		files = append(files, File{})
		if p.dec.PeekKind() != '{' {
			if err := p.wrongKind(field{i, ""}, "an object"); err != nil {
				return nil, err
			}
			continue
		}
		if err := p.file(i, &files[i]); err != nil {
			return nil, err
		}
	}
	_, err := p.dec.ReadToken()
	return files, err
}

// fileMembers are the members of a file entry, in the order their problems
// are reported; unknown members come after them.
var fileMembers = [...]string{"path", "sha256", "size"}

// file reads entry i of the files array.
func (p *parser) file(i int, f *File) error {
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	// Each member is read when it comes; its problems are reported in
	// the order of fileMembers.
	var seen [len(fileMembers)]bool
	var probs [len(fileMembers)][]ManifestProblem
	var unknown []string
	at := p.at
	for p.dec.PeekKind() != '}' {
		name, err := p.name()
		if err != nil {
			return err
		}
		k := slices.Index(fileMembers[:], string(name))
		if k < 0 {
			unknown = append(unknown, string(name))
			if err := p.dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		seen[k] = true
		where, before := field{i, fileMembers[k]}, len(p.members[at])
		switch k {
		case 0:
			f.Path, _, err = p.str(where)
		case 1:
			f.SHA256, _, err = p.str(where)
		default:
			f.Size, _, err = p.integer(where)
		}
		if err != nil {
			return err
		}
		if len(p.members[at]) > before {
			probs[k] = append(probs[k], p.members[at][before:]...)
			p.members[at] = p.members[at][:before]
		}
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	for k, name := range fileMembers {
		p.members[at] = append(p.members[at], probs[k]...)
		if !seen[k] {
			p.add(field{i, name}.String(), "", "missing")
		}
	}
	if len(unknown) > 0 {
		p.unknown(field{i, ""}.String(), unknown)
	}
	return nil
}

// field names a member in problems: a top-level one (i < 0), or one of
// entry i of the files array (the entry itself when name is ""). It is
// formatted only for a problem.
type field struct {
	i    int
	name string
}

func (f field) String() string {
	switch {
	case f.i < 0:
		return f.name
	case f.name == "":
		return fmt.Sprintf("files[%d]", f.i)
	}
	return fmt.Sprintf("files[%d].%s", f.i, f.name)
}

// unknown reports each member name of the object at where that no field
// declares, sorted.
func (p *parser) unknown(where string, names []string) {
	slices.Sort(names)
	for _, name := range names {
		p.members[p.at] = append(p.members[p.at], ManifestProblem{Field: where, Reason: "unknown field " + quoteValue(name)})
	}
}

// wrongKind reads a value that is not of the kind wanted and reports it.
func (p *parser) wrongKind(f field, want string) error {
	v, err := p.dec.ReadValue()
	if err != nil {
		return err
	}
	p.add(f.String(), "", "must be "+want+", got "+strictjson.KindName(v))
	return nil
}

// str reads a string value; ok is false (and the problem recorded) when
// the value is of another type.
func (p *parser) str(f field) (s string, ok bool, err error) {
	v, err := p.dec.ReadValue()
	if err != nil {
		return "", false, err
	}
	if v.Kind() != '"' {
		p.add(f.String(), "", "must be a string, got "+strictjson.KindName(v))
		return "", false, nil
	}
	s, err = unquote(v)
	return s, err == nil, err
}

// integer reads an integer value.
func (p *parser) integer(f field) (n int64, ok bool, err error) {
	v, err := p.dec.ReadValue()
	if err != nil {
		return 0, false, err
	}
	if v.Kind() != '0' {
		p.add(f.String(), "", "must be an integer, got "+strictjson.KindName(v))
		return 0, false, nil
	}
	if !bytes.ContainsAny(v, ".eE") {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n, true, nil
		}
	}
	// Not a plain int64: the strict decoder reads it or says why.
	var big int64
	if err := strictjson.Unmarshal(v, &big); err != nil {
		pr := problemOf(f.String(), strictjson.Explain(err, v))
		p.add(pr.Field, pr.Value, pr.Reason)
		return 0, false, nil
	}
	return big, true, nil
}

// unquote returns the string a JSON string value holds (its UTF-8 and
// escapes were checked by the decoder).
func unquote(v jsontext.Value) (string, error) {
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), nil
	}
	s, err := jsontext.AppendUnquote(nil, v)
	return string(s), err
}
