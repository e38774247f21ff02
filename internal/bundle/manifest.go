package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/strictjson"
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
	Field  string // such as "files[3].path"; empty for the whole document (e.g. invalid JSON)
	Value  string // quoted for display (strings Go-quoted, maybe shortened); may be empty
	Reason string
}

// String formats the problem as `field value: reason`, for example
// `files[3].path "a/../b": has a ".." segment`.
func (p ManifestProblem) String() string {
	return (&strictjson.Error{Field: p.Field, Value: p.Value, Reason: p.Reason}).Error()
}

// ManifestError lists every problem found in a manifest. ParseManifest and
// EncodeManifest return it (possibly wrapped).
type ManifestError struct {
	Problems []ManifestProblem
}

// Error lists the problems, one per line after a header if more than one.
func (e *ManifestError) Error() string {
	switch len(e.Problems) {
	case 0:
		return "invalid manifest"
	case 1:
		return "invalid manifest: " + e.Problems[0].String()
	}
	return listed(fmt.Sprintf("invalid manifest (%d problems):", len(e.Problems)), e.Problems)
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

// ComputeDigest returns the digest of a bundle with these files
// (docs/bundle.md): "sha256:" and the hex SHA-256 of what sha256sum prints for
// them, sorted by path byte-wise. files is not modified.
func ComputeDigest(files []File) string {
	byPath := func(a, b File) int { return strings.Compare(a.Path, b.Path) }
	sorted := files
	if !slices.IsSortedFunc(files, byPath) {
		sorted = slices.Clone(files)
		slices.SortStableFunc(sorted, byPath)
	}
	// The sha256sum text, hashed at once.
	n := 0
	for _, f := range sorted {
		n += len(f.SHA256) + len(f.Path) + 3
	}
	text := make([]byte, 0, n)
	for _, f := range sorted {
		text = append(text, strings.TrimPrefix(f.SHA256, sha256Prefix)...)
		text = append(text, "  "...)
		text = append(text, f.Path...)
		text = append(text, '\n')
	}
	sum := sha256.Sum256(text)
	return FormatSHA256(sum[:])
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

// validate returns every semantic problem of m; checkDigest false (the
// parser found the files array malformed) skips the digest comparison.
func (m *Manifest) validate(checkDigest bool) []ManifestProblem {
	var probs []ManifestProblem
	add := func(field, value, reason string) {
		probs = append(probs, ManifestProblem{Field: field, Value: value, Reason: reason})
	}
	if m.SchemaVersion != SchemaVersion {
		add("schema_version", strconv.Itoa(m.SchemaVersion), unsupportedVersion(int64(m.SchemaVersion)))
	}
	if err := ValidateID(m.ID); err != nil {
		add("id", strictjson.Quote(m.ID), err.Error())
	}
	if m.Created.IsZero() {
		add("created", "", "missing (or the zero time 0001-01-01T00:00:00Z)")
	} else if y := m.Created.UTC().Year(); y < 0 || y > 9999 {
		add("created", "", fmt.Sprintf("year %d is outside 0000-9999", y))
	}
	digestOK := true
	if err := CheckSHA256(m.Digest); err != nil {
		add("digest", strictjson.Quote(m.Digest), err.Error())
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
			fileProb(i, "path", strictjson.Quote(f.Path), pathReason(err))
		} else if f.Path == ManifestName {
			fileProb(i, "path", strictjson.Quote(f.Path), "is the manifest itself, which must not be listed")
		} else if j, dup := index[f.Path]; dup {
			fileProb(i, "path", strictjson.Quote(f.Path), fmt.Sprintf("duplicate of files[%d].path", j))
		} else {
			index[f.Path] = i
		}
		if err := CheckSHA256(f.SHA256); err != nil {
			fileProb(i, "sha256", strictjson.Quote(f.SHA256), err.Error())
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
				fileProb(i, "path", strictjson.Quote(f.Path), fmt.Sprintf("its parent %q is listed as a file (files[%d])", f.Path[:k], j))
				break
			}
		}
	}
	if digestOK && filesOK && checkDigest {
		if want := ComputeDigest(m.Files); m.Digest != want {
			add("digest", strictjson.Quote(m.Digest), "does not match the listed files (computed "+want+")")
		}
	}
	return probs
}

// pathReason is the reason of a cleanpath error, without the path.
func pathReason(err error) string {
	if ce, ok := errors.AsType[*cleanpath.Error](err); ok {
		return ce.Reason
	}
	return err.Error()
}

func unsupportedVersion(v int64) string {
	if v > SchemaVersion {
		return fmt.Sprintf("unsupported schema version (this distributor reads version %d only)", SchemaVersion)
	}
	return fmt.Sprintf("must be %d", SchemaVersion)
}

// EncodeManifest checks every contract rule not involving the files on disk
// (a wrapped *ManifestError lists every problem, naming entries by index) and
// returns m's canonical encoding: two-space indented JSON, fields in contract
// order, files sorted by path, created in UTC RFC 3339, a trailing newline.
func EncodeManifest(m *Manifest) ([]byte, error) {
	if probs := m.validate(true); len(probs) > 0 {
		return nil, fmt.Errorf("encode manifest: %w", &ManifestError{Problems: probs})
	}
	out := *m
	out.Created, out.Files = m.Created.UTC(), slices.Clone(m.Files)
	slices.SortStableFunc(out.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return buf.Bytes(), nil
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
