package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

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
