package bundle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/strictjson"
)

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
