package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/distributor-dev/distributor/internal/cleanpath"
)

// SchemaVersion is the only manifest schema version this package reads and
// writes.
const SchemaVersion = 1

// MaxIDLen is the longest manifest id, in characters (all ASCII).
const MaxIDLen = 128

// MaxManifestSize is the largest manifest.json Load reads, in bytes.
const MaxManifestSize = 64 << 20

// sha256Prefix starts every digest and file hash in a manifest.
const sha256Prefix = "sha256:"

// ManifestProblem is one thing wrong with a manifest.
type ManifestProblem struct {
	// Field names the offending field, such as "files[3].path"; it is empty
	// for problems with the document as a whole (e.g. invalid JSON).
	Field string
	// Value is the offending value, already quoted for display (strings
	// Go-quoted and possibly shortened), or empty when there is none to show.
	Value string
	// Reason says what is wrong.
	Reason string
}

// String formats the problem as `field value: reason`, for example
// `files[3].path "a/../b": has a ".." segment`.
func (p ManifestProblem) String() string {
	var b strings.Builder
	b.WriteString(p.Field)
	if p.Value != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.Value)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(p.Reason)
	return b.String()
}

// ManifestError lists every problem found in a manifest. ParseManifest,
// (*Manifest).Validate and EncodeManifest return it (possibly wrapped).
type ManifestError struct {
	Problems []ManifestProblem
}

// Error lists the problems, one per line after a header line when there is
// more than one.
func (e *ManifestError) Error() string {
	switch len(e.Problems) {
	case 0:
		return "invalid manifest"
	case 1:
		return "invalid manifest: " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "invalid manifest (%d problems):", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// FormatSHA256 formats a raw SHA-256 sum as "sha256:<64 lowercase hex>".
func FormatSHA256(sum []byte) string {
	return sha256Prefix + hex.EncodeToString(sum)
}

// CheckSHA256 reports whether s is "sha256:" followed by exactly 64 lowercase
// hexadecimal digits, the form of every hash and digest in a manifest.
func CheckSHA256(s string) error {
	h, ok := strings.CutPrefix(s, sha256Prefix)
	if !ok {
		return errors.New(`must start with "sha256:"`)
	}
	if len(h) != 2*sha256.Size {
		return fmt.Errorf("must have 64 hex digits after \"sha256:\", has %d characters", len(h))
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			return errors.New("must use lowercase hex digits")
		default:
			return fmt.Errorf("has a non-hex character %q", rune(c))
		}
	}
	return nil
}

// ValidateID reports whether id is a valid bundle id: 1 to 128 characters of
// [A-Za-z0-9._-], starting with a letter or a digit.
func ValidateID(id string) error {
	if id == "" {
		return errors.New("is empty")
	}
	for i, r := range id {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case r == '.' || r == '_' || r == '-':
			if i == 0 {
				return errors.New("must start with a letter or a digit")
			}
		case r == utf8.RuneError && !utf8.ValidString(id[i:]):
			return errors.New("is not valid UTF-8 (allowed: A-Z a-z 0-9 . _ -)")
		default:
			return fmt.Errorf("contains %q (allowed: A-Z a-z 0-9 . _ -)", r)
		}
	}
	if len(id) > MaxIDLen { // all ASCII by now: bytes are characters
		return fmt.Errorf("is %d characters long, at most %d allowed", len(id), MaxIDLen)
	}
	return nil
}

// ComputeDigest returns the content digest of a bundle with these files:
// "sha256:" followed by the hex SHA-256 of one line per file, sorted by path
// byte-wise, each line "<hex of the file's sha256>  <path>\n" — exactly the
// output of sha256sum. The "sha256:" prefix of each file hash is left out of
// its line. files is not modified.
func ComputeDigest(files []File) string {
	sorted := slices.Clone(files)
	slices.SortStableFunc(sorted, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	h := sha256.New()
	for _, f := range sorted {
		io.WriteString(h, strings.TrimPrefix(f.SHA256, sha256Prefix))
		io.WriteString(h, "  ")
		io.WriteString(h, f.Path)
		io.WriteString(h, "\n")
	}
	return FormatSHA256(h.Sum(nil))
}

// Lookup returns the listed file with this path. m.Files must be sorted by
// path, as ParseManifest and Load leave them.
func (m *Manifest) Lookup(path string) (File, bool) {
	i, ok := slices.BinarySearchFunc(m.Files, path, func(f File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return File{}, false
	}
	return m.Files[i], true
}

// Validate checks every rule of the manifest contract that does not involve
// the bundle's files on disk, including that Digest matches the listed files.
// Files may be in any order; problems name entries by their index in
// m.Files. It returns a *ManifestError listing every problem, or nil.
func (m *Manifest) Validate() error {
	probs := m.validate(true)
	if len(probs) == 0 {
		return nil
	}
	return &ManifestError{Problems: probs}
}

// validate returns every semantic problem of m. checkDigest false skips
// comparing the digest with the files (used when the parser already found
// the files array malformed).
func (m *Manifest) validate(checkDigest bool) []ManifestProblem {
	var probs []ManifestProblem
	add := func(field, value, reason string) {
		probs = append(probs, ManifestProblem{Field: field, Value: value, Reason: reason})
	}
	if m.SchemaVersion != SchemaVersion {
		add("schema_version", strconv.Itoa(m.SchemaVersion), unsupportedVersion(int64(m.SchemaVersion)))
	}
	if err := ValidateID(m.ID); err != nil {
		add("id", quoteValue(m.ID), err.Error())
	}
	if m.Created.IsZero() {
		add("created", "", "missing (or the zero time 0001-01-01T00:00:00Z)")
	} else if y := m.Created.UTC().Year(); y < 0 || y > 9999 {
		add("created", "", fmt.Sprintf("year %d is outside 0000-9999", y))
	}
	digestOK := true
	if err := CheckSHA256(m.Digest); err != nil {
		add("digest", quoteValue(m.Digest), err.Error())
		digestOK = false
	}
	if len(m.Files) == 0 {
		add("files", "", "must list at least one file")
		return probs
	}

	filesOK := true
	fileProb := func(i int, field, value, reason string) {
		add(fmt.Sprintf("files[%d].%s", i, field), value, reason)
		filesOK = false
	}
	index := make(map[string]int, len(m.Files)) // valid path -> first index
	for i, f := range m.Files {
		if err := cleanpath.CheckUnreserved(f.Path); err != nil {
			reason := err.Error()
			var ce *cleanpath.Error
			if errors.As(err, &ce) {
				reason = ce.Reason
			}
			fileProb(i, "path", quoteValue(f.Path), reason)
		} else if f.Path == ManifestName {
			fileProb(i, "path", quoteValue(f.Path), "is the manifest itself, which must not be listed")
		} else if j, dup := index[f.Path]; dup {
			fileProb(i, "path", quoteValue(f.Path), fmt.Sprintf("duplicate of files[%d].path", j))
		} else {
			index[f.Path] = i
		}
		if err := CheckSHA256(f.SHA256); err != nil {
			fileProb(i, "sha256", quoteValue(f.SHA256), err.Error())
		}
		if f.Size < 0 {
			fileProb(i, "size", strconv.FormatInt(f.Size, 10), "must not be negative")
		}
	}
	// A listed path cannot also be the parent directory of another one.
	for i, f := range m.Files {
		if index[f.Path] != i {
			continue // invalid or duplicate, already reported
		}
		for k := 0; k < len(f.Path); k++ {
			if f.Path[k] != '/' {
				continue
			}
			if j, ok := index[f.Path[:k]]; ok {
				fileProb(i, "path", quoteValue(f.Path), fmt.Sprintf("its parent %q is listed as a file (files[%d])", f.Path[:k], j))
				break
			}
		}
	}
	if digestOK && filesOK && checkDigest {
		if want := ComputeDigest(m.Files); m.Digest != want {
			add("digest", quoteValue(m.Digest), "does not match the listed files (computed "+want+")")
		}
	}
	return probs
}

func unsupportedVersion(v int64) string {
	if v > SchemaVersion {
		return fmt.Sprintf("unsupported schema version (this distributor reads version %d only)", SchemaVersion)
	}
	return fmt.Sprintf("must be %d", SchemaVersion)
}

// quoteValue Go-quotes s for an error message, shortening long values.
func quoteValue(s string) string {
	const max = 96
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("…(%d bytes)", len(s))
}

// EncodeManifest returns the canonical encoding of m: JSON with a two-space
// indent, the fields in the order schema_version, id, created, digest, files,
// files sorted by path with the fields path, sha256, size, created in UTC
// RFC 3339 (fractional seconds only when present), and a trailing newline.
// The same manifest always encodes to the same bytes. It validates m first
// and returns a *ManifestError (wrapped) if m is invalid.
func EncodeManifest(m *Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	type jsonFile struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	type jsonManifest struct {
		SchemaVersion int        `json:"schema_version"`
		ID            string     `json:"id"`
		Created       string     `json:"created"`
		Digest        string     `json:"digest"`
		Files         []jsonFile `json:"files"`
	}
	out := jsonManifest{
		SchemaVersion: m.SchemaVersion,
		ID:            m.ID,
		Created:       m.Created.UTC().Format(time.RFC3339Nano),
		Digest:        m.Digest,
		Files:         make([]jsonFile, len(m.Files)),
	}
	for i, f := range m.Files {
		out.Files[i] = jsonFile(f)
	}
	slices.SortStableFunc(out.Files, func(a, b jsonFile) int { return strings.Compare(a.Path, b.Path) })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return buf.Bytes(), nil
}

// ParseManifest decodes and validates a manifest.json document strictly:
// unknown or duplicate fields anywhere, wrong JSON types, missing fields,
// trailing data and every rule of the manifest contract (including that the
// digest matches the listed files) are errors. It needs no file I/O. The
// returned manifest's Files are sorted by path byte-wise and Created is in
// UTC. On failure it returns a *ManifestError naming every problem found
// (a JSON syntax error stops the parse and is reported alone).
func ParseManifest(data []byte) (*Manifest, error) {
	p := &parser{data: data, dec: json.NewDecoder(bytes.NewReader(data)), reported: map[string]bool{}}
	p.dec.UseNumber()
	m, err := p.parse()
	if err != nil {
		return nil, &ManifestError{Problems: []ManifestProblem{{Reason: err.Error()}}}
	}
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

// parser walks the JSON tokens of a manifest, collecting structural problems
// (types, missing, unknown and duplicate fields). Semantic rules are left to
// (*Manifest).validate.
type parser struct {
	data          []byte
	dec           *json.Decoder
	problems      []ManifestProblem
	reported      map[string]bool // fields with a structural problem
	futureVersion bool
}

func (p *parser) add(field, value, reason string) {
	p.problems = append(p.problems, ManifestProblem{Field: field, Value: value, Reason: reason})
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

// token returns the next JSON token. Strings are decoded from the raw input
// so that invalid UTF-8 and unpaired surrogate escapes are kept as invalid
// UTF-8 (encoding/json would silently turn them into U+FFFD), letting the
// validation rules reject them.
func (p *parser) token() (json.Token, error) {
	start := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntaxError(err)
	}
	if _, ok := tok.(string); ok {
		end := p.dec.InputOffset()
		if start >= 0 && end <= int64(len(p.data)) && start <= end {
			raw := p.data[start:end]
			if q := bytes.IndexByte(raw, '"'); q >= 0 {
				if s, ok := unquoteRaw(raw[q:]); ok {
					return s, nil
				}
			}
		}
	}
	return tok, nil
}

func (p *parser) syntaxError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(p.data, se.Offset)
		return fmt.Errorf("invalid JSON near line %d, column %d: %s", line, col, se.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("invalid JSON: unexpected end of input")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// lineCol converts a byte offset to a 1-based line and column. The offsets
// json.Decoder reports point at or just before the offending byte.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// parseRFC3339 parses an RFC 3339 timestamp, refusing what time.Parse
// tolerates beyond the RFC: a comma before fractional seconds and zone
// offsets of 24 hours or more.
func parseRFC3339(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, err
	}
	if _, off := t.Zone(); strings.ContainsRune(s, ',') || off <= -24*3600 || off >= 24*3600 {
		return time.Time{}, errors.New("not RFC 3339")
	}
	return t, nil
}

// kind names the JSON type of a token that starts a value.
func kind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// skip consumes the rest of a value whose first token is tok.
func (p *parser) skip(tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || (d != '{' && d != '[') {
		return nil
	}
	for depth := 1; depth > 0; {
		t, err := p.token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
		}
	}
	return nil
}

// object parses a JSON object whose '{' has been read, calling field for each
// member with the member's first token. Unknown members are reported (by
// field returning false) and skipped; duplicates are reported.
func (p *parser) object(where string, field func(name string, tok json.Token) (known bool, err error)) error {
	seen := map[string]bool{}
	prefix := ""
	if where != "" {
		prefix = where + "."
	}
	for p.dec.More() {
		kt, err := p.token()
		if err != nil {
			return err
		}
		name, _ := kt.(string)
		if seen[name] {
			p.add(prefix+name, "", "duplicate field")
		}
		seen[name] = true
		vt, err := p.token()
		if err != nil {
			return err
		}
		known, err := field(name, vt)
		if err != nil {
			return err
		}
		if !known {
			p.problems = append(p.problems, ManifestProblem{Field: where, Reason: fmt.Sprintf("unknown field %s", quoteValue(name))})
			if err := p.skip(vt); err != nil {
				return err
			}
		}
	}
	_, err := p.token() // '}'
	return err
}

// str expects a string value; ok is false (and the problem recorded) when
// the value is of another type.
func (p *parser) str(field string, tok json.Token) (s string, ok bool, err error) {
	s, ok = tok.(string)
	if !ok {
		p.add(field, "", "must be a string, got "+kind(tok))
		return "", false, p.skip(tok)
	}
	return s, true, nil
}

// integer expects an integer value.
func (p *parser) integer(field string, tok json.Token) (int64, bool, error) {
	n, ok := tok.(json.Number)
	if !ok {
		p.add(field, "", "must be an integer, got "+kind(tok))
		return 0, false, p.skip(tok)
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		reason := "must be an integer"
		if errors.Is(err, strconv.ErrRange) {
			reason = "is out of range"
		}
		p.add(field, string(n), reason)
		return 0, false, nil
	}
	return v, true, nil
}

func (p *parser) parse() (*Manifest, error) {
	if len(bytes.TrimSpace(p.data)) == 0 {
		return nil, errors.New("document is empty")
	}
	tok, err := p.token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("document must be a JSON object, got %s", kind(tok))
	}
	m := &Manifest{}
	present := map[string]bool{}
	err = p.object("", func(name string, tok json.Token) (bool, error) {
		present[name] = true
		var err error
		switch name {
		case "schema_version":
			var v int64
			var ok bool
			if v, ok, err = p.integer(name, tok); ok {
				if v != SchemaVersion {
					p.add(name, strconv.FormatInt(v, 10), unsupportedVersion(v))
					p.futureVersion = v > SchemaVersion
				}
				m.SchemaVersion = int(min(max(v, -1<<31), 1<<31-1))
			}
		case "id":
			m.ID, _, err = p.str(name, tok)
		case "created":
			var s string
			var ok bool
			if s, ok, err = p.str(name, tok); ok {
				t, perr := parseRFC3339(s)
				if perr != nil {
					p.add(name, quoteValue(s), "is not an RFC 3339 timestamp such as 2026-06-19T12:00:00Z")
				} else {
					m.Created = t.UTC()
				}
			}
		case "digest":
			m.Digest, _, err = p.str(name, tok)
		case "files":
			m.Files, err = p.files(tok)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	off := p.dec.InputOffset()
	if _, err := p.dec.Token(); err != io.EOF {
		rest := p.data[min(max(off, 0), int64(len(p.data))):]
		off += int64(len(rest) - len(bytes.TrimLeft(rest, " \t\r\n")))
		line, col := lineCol(p.data, off)
		return nil, fmt.Errorf("invalid JSON at line %d, column %d: unexpected data after the manifest object", line, col)
	}
	for _, name := range []string{"schema_version", "id", "created", "digest", "files"} {
		if !present[name] {
			p.add(name, "", "missing")
		}
	}
	return m, nil
}

func (p *parser) files(tok json.Token) ([]File, error) {
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		p.add("files", "", "must be an array, got "+kind(tok))
		return nil, p.skip(tok)
	}
	var files []File
	for i := 0; p.dec.More(); i++ {
		where := fmt.Sprintf("files[%d]", i)
		et, err := p.token()
		if err != nil {
			return nil, err
		}
		var f File
		if d, ok := et.(json.Delim); !ok || d != '{' {
			p.add(where, "", "must be an object, got "+kind(et))
			if err := p.skip(et); err != nil {
				return nil, err
			}
			files = append(files, f)
			continue
		}
		present := map[string]bool{}
		err = p.object(where, func(name string, tok json.Token) (bool, error) {
			present[name] = true
			field := where + "." + name
			var err error
			switch name {
			case "path":
				f.Path, _, err = p.str(field, tok)
			case "sha256":
				f.SHA256, _, err = p.str(field, tok)
			case "size":
				f.Size, _, err = p.integer(field, tok)
			default:
				return false, nil
			}
			return true, err
		})
		if err != nil {
			return nil, err
		}
		for _, name := range []string{"path", "sha256", "size"} {
			if !present[name] {
				p.add(where+"."+name, "", "missing")
			}
		}
		files = append(files, f)
	}
	if _, err := p.token(); err != nil { // ']'
		return nil, err
	}
	return files, nil
}

// unquoteRaw decodes a JSON string literal (quotes included) that the JSON
// decoder has already accepted. Unlike encoding/json it keeps invalid UTF-8
// bytes as they are and encodes an unpaired surrogate escape as the
// (invalid) three-byte sequence, so that later checks see them.
func unquoteRaw(lit []byte) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	s := lit[1 : len(lit)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s), true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		switch s[i+1] {
		case '"', '\\', '/':
			b = append(b, s[i+1])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r < 0xDC00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2, ok := hex4(s[i+2:]); ok && 0xDC00 <= r2 && r2 < 0xE000 {
						b = utf8.AppendRune(b, utf16.DecodeRune(r, r2))
						i += 6
						continue
					}
				}
				// Unpaired surrogate: keep it visible as invalid UTF-8.
				b = append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
				continue
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return "", false
		}
		i += 2
	}
	return string(b), true
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
