package bundle

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/distributor-dev/distributor/internal/strictjson"
	"github.com/go-json-experiment/json/jsontext"
)

// referenceParseManifest is the thorough parser ParseManifest replaced:
// every member read as raw JSON and checked on its own, every problem
// named. The tests hold ParseManifest to its results and its problems.
func referenceParseManifest(data []byte) (*Manifest, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ManifestError{Problems: []ManifestProblem{{Reason: "document is empty"}}}
	}
	var w refManifest
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return nil, &ManifestError{Problems: []ManifestProblem{refProblemOf("", strictjson.Explain(err, data))}}
	}
	p := &refParser{reported: map[string]bool{}}
	m := p.manifest(&w)
	// A manifest from a future schema is reported as that alone: its other
	// fields follow rules this version does not know.
	if p.futureVersion {
		var only []ManifestProblem
		for _, pr := range p.problems {
			if pr.Field == "schema_version" {
				only = append(only, pr)
			}
		}
		return nil, &ManifestError{Problems: only}
	}
	probs := p.problems
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
	if len(probs) > 0 {
		return nil, &ManifestError{Problems: probs}
	}
	slices.SortStableFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return m, nil
}

// wireManifest is manifest.json as read: each member raw, so that its type
// is checked (and reported) on its own.
type refManifest struct {
	SchemaVersion jsontext.Value `json:"schema_version"`
	ID            jsontext.Value `json:"id"`
	Created       jsontext.Value `json:"created"`
	Digest        jsontext.Value `json:"digest"`
	Files         jsontext.Value `json:"files"`
	// Unknown collects the members no field declares, each reported.
	Unknown jsontext.Value `json:",embed"`
}

// wireFile is one entry of the files array as read.
type refFile struct {
	Path    jsontext.Value `json:"path"`
	SHA256  jsontext.Value `json:"sha256"`
	Size    jsontext.Value `json:"size"`
	Unknown jsontext.Value `json:",embed"`
}

// problemOf turns a strict decoding error of the value at field (empty for
// the document) into a manifest problem.
func refProblemOf(field string, e *strictjson.Error) ManifestProblem {
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

// parser checks the raw members of a manifest, collecting structural
// problems (types, missing and unknown fields). Semantic rules are left to
// (*Manifest).validate.
type refParser struct {
	problems      []ManifestProblem
	reported      map[string]bool // fields with a structural problem
	futureVersion bool
}

func (p *refParser) add(field, value, reason string) {
	p.problems = append(p.problems, ManifestProblem{Field: field, Value: value, Reason: reason})
	p.reported[field] = true
}

// alreadyReported reports whether field, or a field containing it, already
// has a structural problem (so a semantic one would only repeat it).
func (p *refParser) alreadyReported(field string) bool {
	for f := range p.reported {
		if field == f || strings.HasPrefix(field, f+".") || strings.HasPrefix(field, f+"[") {
			return true
		}
	}
	return false
}

// decode reads the raw value v of field into dst strictly; a failure is
// recorded as a problem of field.
func (p *refParser) decode(field string, v jsontext.Value, dst any) bool {
	if err := strictjson.Unmarshal(v, dst); err != nil {
		pr := refProblemOf(field, strictjson.Explain(err, v))
		p.add(pr.Field, pr.Value, pr.Reason)
		return false
	}
	return true
}

// unknown reports each member of the collected unknown members u of the
// object at where.
func (p *refParser) unknown(where string, u jsontext.Value) {
	if len(u) == 0 {
		return
	}
	var members map[string]jsontext.Value
	if !p.decode(where, u, &members) {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(members)) {
		p.problems = append(p.problems, ManifestProblem{Field: where, Reason: "unknown field " + strictjson.Quote(name)})
	}
}

// str expects a string value; ok is false (and the problem recorded) when
// the value is of another type.
func (p *refParser) str(field string, v jsontext.Value) (s string, ok bool) {
	if v.Kind() != '"' {
		p.add(field, "", "must be a string, got "+strictjson.KindName(v))
		return "", false
	}
	return s, p.decode(field, v, &s)
}

// integer expects an integer value.
func (p *refParser) integer(field string, v jsontext.Value) (n int64, ok bool) {
	if v.Kind() != '0' {
		p.add(field, "", "must be an integer, got "+strictjson.KindName(v))
		return 0, false
	}
	return n, p.decode(field, v, &n)
}

func (p *refParser) manifest(w *refManifest) *Manifest {
	m := &Manifest{}
	missing := func(name string, v jsontext.Value) bool {
		if v == nil {
			p.add(name, "", "missing")
		}
		return v == nil
	}
	if !missing("schema_version", w.SchemaVersion) {
		if v, ok := p.integer("schema_version", w.SchemaVersion); ok {
			if v != SchemaVersion {
				p.add("schema_version", strconv.FormatInt(v, 10), unsupportedVersion(v))
				p.futureVersion = v > SchemaVersion
			}
			m.SchemaVersion = int(min(max(v, -1<<31), 1<<31-1))
		}
	}
	if !missing("id", w.ID) {
		m.ID, _ = p.str("id", w.ID)
	}
	if !missing("created", w.Created) {
		if s, ok := p.str("created", w.Created); ok {
			t, err := parseRFC3339(s)
			if err != nil {
				p.add("created", strictjson.Quote(s), "is not an RFC 3339 timestamp such as 2026-06-19T12:00:00Z")
			} else {
				m.Created = t.UTC()
			}
		}
	}
	if !missing("digest", w.Digest) {
		m.Digest, _ = p.str("digest", w.Digest)
	}
	if !missing("files", w.Files) {
		m.Files = p.files(w.Files)
	}
	p.unknown("", w.Unknown)
	return m
}

func (p *refParser) files(v jsontext.Value) []File {
	if v.Kind() != '[' {
		p.add("files", "", "must be an array, got "+strictjson.KindName(v))
		return nil
	}
	var entries []jsontext.Value
	if !p.decode("files", v, &entries) {
		return nil
	}
	files := make([]File, len(entries))
	for i, e := range entries {
		where := fmt.Sprintf("files[%d]", i)
		if e.Kind() != '{' {
			p.add(where, "", "must be an object, got "+strictjson.KindName(e))
			continue
		}
		var wf refFile
		if !p.decode(where, e, &wf) {
			continue
		}
		f := &files[i]
		for _, name := range []string{"path", "sha256", "size"} {
			raw := map[string]jsontext.Value{"path": wf.Path, "sha256": wf.SHA256, "size": wf.Size}[name]
			field := where + "." + name
			switch {
			case raw == nil:
				p.add(field, "", "missing")
			case name == "path":
				f.Path, _ = p.str(field, raw)
			case name == "sha256":
				f.SHA256, _ = p.str(field, raw)
			default:
				f.Size, _ = p.integer(field, raw)
			}
		}
		p.unknown(where, wf.Unknown)
	}
	return files
}
