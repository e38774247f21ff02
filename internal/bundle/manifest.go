package bundle

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
		// One predictable branch a digit: a switch on digits and letters
		// mispredicts on random hex (P5: 13% of an additive run's CPU).
		if c := h[i]; !lowerHex[c] {
			if 'A' <= c && c <= 'F' {
				return errors.New("must use lowercase hex digits")
			}
			return fmt.Errorf("has a non-hex character %q", rune(c))
		}
	}
	return nil
}

// lowerHex marks the lowercase hex digits.
var lowerHex = [256]bool{'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true,
	'8': true, '9': true, 'a': true, 'b': true, 'c': true, 'd': true, 'e': true, 'f': true}

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

// sealTempPrefix starts Seal's temporary file next to manifest.json: reserved,
// so no bundle file has it, and Seal ignores an interrupted run's leftovers.
const sealTempPrefix = cleanpath.ReservedPrefix + "-seal-"

// Seal atomically writes dir/manifest.json listing every regular file below
// dir (but itself and an interrupted Seal's leftovers), with id and created
// (UTC, whole seconds). Symlinks, other non-regular files and unclean or
// reserved paths are a *ValidationError naming each; an invalid id, a year
// outside 0000-9999 and a directory without files are errors too.
func Seal(ctx context.Context, dir, id string, created time.Time) (*Manifest, error) {
	if err := ValidateID(id); err != nil {
		return nil, fmt.Errorf("seal bundle %s: id %s: %w", dir, strictjson.Quote(id), err)
	}
	created = created.UTC().Truncate(time.Second)
	if y := created.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("seal bundle %s: created %s: year outside 0000-9999", dir, created.Format(time.RFC3339))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("seal bundle %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		if fi, serr := os.Stat(abs); serr == nil && !fi.IsDir() {
			return nil, fmt.Errorf("seal bundle %s: not a directory: a bundle is the directory that holds the report's files", abs)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("seal bundle %s: the directory does not exist: write the report's files into it first, then seal it", abs)
		}
		return nil, fmt.Errorf("seal bundle %s: open the directory: %w", abs, err)
	}
	defer root.Close()

	paths, problems, err := sealCandidates(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("seal bundle %s: %w", abs, err)
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Dir: abs, Problems: problems}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("seal bundle %s: no files to list (a manifest must list at least one file)", abs)
	}

	m := &Manifest{SchemaVersion: SchemaVersion, ID: id, Created: created}
	buf := make([]byte, hashBuf)
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("seal bundle %s: %w", abs, err)
		}
		f, _, err := openRegular(root, p)
		if err != nil {
			problems = append(problems, Problem{Path: p, Reason: err.Error()})
			continue
		}
		sum, n, reason, err := hashFile(ctx, f, buf)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("seal bundle %s: %s: %w", abs, p, err)
		}
		if reason != "" {
			problems = append(problems, Problem{Path: p, Reason: reason})
			continue
		}
		m.Files = append(m.Files, File{Path: p, SHA256: sum, Size: n})
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Dir: abs, Problems: problems}
	}
	m.Digest = ComputeDigest(m.Files)
	data, err := EncodeManifest(m)
	if err != nil {
		return nil, fmt.Errorf("seal bundle %s: %w", abs, err)
	}
	if err := writeAtomic(root, ManifestName, data); err != nil {
		return nil, fmt.Errorf("seal bundle %s: write %s: %w", abs, ManifestName, err)
	}
	return m, nil
}

// sealCandidates returns the sorted regular files below root to list, and a
// problem for every entry that cannot be.
func sealCandidates(ctx context.Context, root *os.Root) ([]string, []Problem, error) {
	var paths []string
	var problems []Problem
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			problems = append(problems, Problem{Path: p, Reason: ioReason("cannot read", err).Error()})
			if d != nil && d.IsDir() && p != "." {
				return fs.SkipDir
			}
			return nil
		}
		if p == "." || p == ManifestName || (!strings.Contains(p, "/") && strings.HasPrefix(p, sealTempPrefix)) {
			return nil
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			problems = append(problems, Problem{Path: p, Reason: "is a symlink (a bundle may hold only regular files)"})
		case d.IsDir():
		case !t.IsRegular():
			problems = append(problems, Problem{Path: p, Reason: fmt.Sprintf("is not a regular file (mode %s)", t)})
		default:
			if err := cleanpath.CheckUnreserved(p); err != nil {
				problems = append(problems, Problem{Path: p, Reason: "cannot be listed: path " + pathReason(err)})
			} else {
				paths = append(paths, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(paths)
	slices.SortStableFunc(problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return paths, problems, nil
}

// writeAtomic replaces name below root with data: a synced temporary file
// renamed over it, then the directory synced.
func writeAtomic(root *os.Root, name string, data []byte) error {
	var rnd [8]byte
	rand.Read(rnd[:]) // never fails: it crashes the program instead
	tmp := sealTempPrefix + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return err
	}
	if d, derr := root.Open("."); derr == nil {
		// Not every platform can sync a directory; the rename is done anyway.
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Problem is one reason a bundle is invalid (or cannot be sealed).
type Problem struct {
	Path   string // bundle-relative, such as "report.md" or "manifest.json"
	Reason string // such as "missing" or "size 12 does not match manifest size 13"
}

// String formats the problem as "path: reason" (the reason alone for a
// problem with the bundle directory itself, whose Path is empty).
func (p Problem) String() string {
	if p.Path == "" {
		return p.Reason
	}
	return p.Path + ": " + p.Reason
}

// ValidationError is Load's error for a bundle not matching its (missing or
// invalid) manifest, and Seal's for a directory it cannot seal: every problem
// found, in path order.
type ValidationError struct {
	Dir      string    // absolute
	Problems []Problem // never empty
	// Unlisted holds the files present but not listed (warnings, as in
	// Bundle.Unlisted), when they could be determined.
	Unlisted []string
	// Hint says what to do next, such as "reseal after an intended edit:
	// distributor bundle seal DIR --id ID"; empty for Seal's errors and a
	// missing directory.
	Hint string
	// Err, for errors.As and errors.Is: the *ManifestError of an invalid
	// manifest, or a missing directory's (fs.ErrNotExist); otherwise nil.
	Err error
}

// Error names the directory, the hint in parentheses and the problems, one
// per line after a header if more than one.
func (e *ValidationError) Error() string {
	hint := ""
	if e.Hint != "" {
		hint = " (" + e.Hint + ")"
	}
	if len(e.Problems) == 1 {
		return fmt.Sprintf("bundle %s: %s%s", e.Dir, e.Problems[0], hint)
	}
	return listed(fmt.Sprintf("bundle %s: %d problems%s:", e.Dir, len(e.Problems), hint), e.Problems)
}

// listed is head followed by each problem on an indented line of its own.
func listed[P fmt.Stringer](head string, problems []P) string {
	var b strings.Builder
	b.WriteString(head)
	for _, p := range problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap returns the underlying error, if any (see Err).
func (e *ValidationError) Unwrap() error { return e.Err }

// pathError is a problem with one bundle path; its text is the reason alone.
type pathError struct {
	reason string
	err    error // for errors.Is, e.g. fs.ErrNotExist; may be nil
}

func (e *pathError) Error() string { return e.reason }
func (e *pathError) Unwrap() error { return e.err }

// ioReason describes an I/O error without repeating the path the caller names.
func ioReason(what string, err error) *pathError {
	inner := err
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		inner = pe.Err
	}
	return &pathError{reason: what + ": " + inner.Error(), err: err}
}

// dirError is the error of a bundle directory that cannot be opened: a
// *ValidationError when it does not exist or is not a directory.
func dirError(abs string, err error) error {
	reason := ""
	if fi, serr := os.Stat(abs); serr == nil && !fi.IsDir() {
		reason = "is not a directory"
	} else if errors.Is(err, fs.ErrNotExist) {
		reason = "directory does not exist"
	}
	if reason == "" {
		return fmt.Errorf("bundle %s: %w", abs, ioReason("cannot open the directory", err))
	}
	return &ValidationError{Dir: abs, Problems: []Problem{{Reason: reason}}, Err: err}
}

// sealHint suggests running `distributor bundle seal` on dir with id
// (the placeholder ID when id is not a valid id), prefixed by what.
func sealHint(dir, id, what string) string {
	if ValidateID(id) != nil {
		id = "ID"
	}
	return what + ": distributor bundle seal " + shellQuote(dir) + " --id " + id
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// characters that need no quoting.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case strings.ContainsRune("/._-+:@%=,", r):
		default:
			safe = false
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
