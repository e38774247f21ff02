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

// ParseManifest decodes manifest.json strictly (unknown, duplicate or missing
// fields, wrong types, trailing data, invalid UTF-8 are errors) and checks
// every contract rule needing no file I/O. Files come sorted by path, Created
// in UTC. A *ManifestError names every problem (one of the JSON text alone).
func ParseManifest(data []byte) (*Manifest, error) {
	m, err := parseManifest(data)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// parseManifest is ParseManifest, but with problems that leave the file list
// usable (a stale digest, a bad id) it returns the manifest too, so that Load
// can check the files and list their problems with the manifest's.
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
	var probs []ManifestProblem
	for _, kp := range p.problems {
		if !p.futureVersion || kp.Field == "schema_version" {
			probs = append(probs, kp.ManifestProblem)
		}
	}
	if p.futureVersion {
		return nil, &ManifestError{Problems: probs}
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

// problemOf turns a strict decoding error at field ("": the document) into a problem.
func problemOf(field string, e *strictjson.Error) ManifestProblem {
	return ManifestProblem{Field: strictjson.JoinField(field, e.Field), Value: e.Value, Reason: e.Detail()}
}

// manifestMembers are a manifest's members in the order their problems are reported; unknown ones follow.
var manifestMembers = [...]string{"schema_version", "id", "created", "digest", "files"}

// fileMembers are the members of a file entry, likewise.
var fileMembers = [...]string{"path", "sha256", "size"}

// parser reads a manifest's tokens, collecting structural problems; semantic
// ones are (*Manifest).validate's. An error it returns is the JSON text's.
type parser struct {
	dec           *jsontext.Decoder
	problems      []keyedProblem
	member        int             // the member of the object being read
	reported      map[string]bool // fields with a structural problem
	futureVersion bool
}

// keyedProblem is a problem and the member of its object it is about, which orders them.
type keyedProblem struct {
	member int
	ManifestProblem
}

func (p *parser) add(field, value, reason string) {
	p.problems = append(p.problems, keyedProblem{p.member, ManifestProblem{Field: field, Value: value, Reason: reason}})
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
	tok, err := p.dec.ReadToken()
	switch {
	case err == nil && (tok.Kind() == '{' || tok.Kind() == 'n'):
		// null reads as an object without members.
		err = p.object(field{-1, ""}, manifestMembers[:], tok.Kind() == 'n', func(k int) error {
			return p.read(m, manifestMembers[k])
		})
	case err == nil:
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
	return m, nil
}

// object reads the members of the object at f (f.name ""), whose '{' was
// read (none when null), and its '}': read(k) reads names[k]'s value, unknown
// members are skipped. Problems are ordered as names lists the members (a
// missing one's where its value's would be), unknown members' last, by name.
func (p *parser) object(f field, names []string, null bool, read func(k int) error) error {
	outer, start := p.member, len(p.problems)
	var seen uint
	var unknown []string
	for !null && p.dec.PeekKind() != '}' {
		name, err := p.name()
		if err != nil {
			return err
		}
		if k := slices.Index(names, string(name)); k < 0 {
			unknown = append(unknown, string(name))
			err = p.dec.SkipValue()
		} else {
			seen, p.member = seen|1<<k, k
			err = read(k)
		}
		if err != nil {
			return err
		}
	}
	if !null {
		if _, err := p.dec.ReadToken(); err != nil {
			return err
		}
	}
	for k, name := range names {
		if seen&(1<<k) == 0 {
			p.member = k
			p.add(field{f.i, name}.String(), "", "missing")
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		p.problems = append(p.problems, keyedProblem{len(names), ManifestProblem{Field: f.String(), Reason: "unknown field " + strictjson.Quote(name)}})
	}
	mine := p.problems[start:]
	slices.SortStableFunc(mine, func(a, b keyedProblem) int { return a.member - b.member })
	for i := range mine {
		mine[i].member = outer
	}
	p.member = outer
	return nil
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

func (p *parser) read(m *Manifest, name string) (err error) {
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
		m.ID, _, err = p.str(field{-1, name})
	case "created":
		s, ok, err := p.str(field{-1, name})
		if err != nil || !ok {
			return err
		}
		t, perr := parseRFC3339(s)
		if perr != nil {
			p.add(name, strictjson.Quote(s), "is not an RFC 3339 timestamp such as 2026-06-19T12:00:00Z")
		} else {
			m.Created = t.UTC()
		}
	case "digest":
		m.Digest, _, err = p.str(field{-1, name})
	case "files":
		m.Files, err = p.files()
	}
	return err
}

func (p *parser) files() ([]File, error) {
	if p.dec.PeekKind() != '[' {
		_, _, err := p.value(field{-1, "files"}, 0, "an array")
		return nil, err
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, err
	}
	var files []File
	for i := 0; p.dec.PeekKind() != ']'; i++ {
		files = append(files, File{})
		if p.dec.PeekKind() != '{' {
			if _, _, err := p.value(field{i, ""}, 0, "an object"); err != nil {
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

func (p *parser) file(i int, f *File) error {
	if _, err := p.dec.ReadToken(); err != nil {
		return err
	}
	return p.object(field{i, ""}, fileMembers[:], false, func(k int) (err error) {
		where := field{i, fileMembers[k]}
		switch k {
		case 0:
			f.Path, _, err = p.str(where)
		case 1:
			f.SHA256, _, err = p.str(where)
		default:
			f.Size, _, err = p.integer(where)
		}
		return err
	})
}

// field names a member in problems: a top-level one (i < 0), or one of
// files[i] (the entry itself when name is ""), formatted only for a problem.
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

// value reads a value; ok false: it is not of kind (want names it; 0: a
// value known to be of another kind), problem recorded.
func (p *parser) value(f field, kind jsontext.Kind, want string) (v jsontext.Value, ok bool, err error) {
	if v, err = p.dec.ReadValue(); err != nil || v.Kind() == kind {
		return v, err == nil, err
	}
	p.add(f.String(), "", "must be "+want+", got "+strictjson.KindName(v))
	return nil, false, nil
}

func (p *parser) str(f field) (s string, ok bool, err error) {
	v, ok, err := p.value(f, '"', "a string")
	if !ok {
		return "", false, err
	}
	s, err = unquote(v)
	return s, err == nil, err
}

func (p *parser) integer(f field) (n int64, ok bool, err error) {
	v, ok, err := p.value(f, '0', "an integer")
	if !ok {
		return 0, false, err
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

// unquote returns a JSON string value's string (the decoder checked its UTF-8 and escapes).
func unquote(v jsontext.Value) (string, error) {
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), nil
	}
	s, err := jsontext.AppendUnquote(nil, v)
	return string(s), err
}
