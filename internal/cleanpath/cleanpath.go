// Package cleanpath holds the one definition of a "clean path" shared by
// manifests, catalogs, configuration and planning: non-empty, at most 1024
// bytes, valid UTF-8, relative and slash-separated, with no empty, "." or ".."
// segment, leading or trailing slash, backslash or control character.
package cleanpath

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the longest clean path, in bytes.
const MaxLen = 1024

// ReservedPrefix starts every name distributor keeps for itself at a
// destination root (catalog, lock, journal, temporary files).
const ReservedPrefix = ".distributor"

// Error describes why a path is not clean.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("path %q: %s", e.Path, e.Reason) }

// Check reports whether p is clean, with an *Error naming the first problem.
func Check(p string) error {
	bad := func(reason string) error { return &Error{Path: p, Reason: reason} }
	switch {
	case p == "":
		return bad("is empty")
	case len(p) > MaxLen:
		return bad(fmt.Sprintf("is longer than %d bytes", MaxLen))
	case !utf8.ValidString(p):
		return bad("is not valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return bad("is absolute (starts with /)")
	case strings.HasSuffix(p, "/"):
		return bad("ends with /")
	case strings.ContainsRune(p, '\\'):
		return bad("contains a backslash")
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return bad(fmt.Sprintf("contains control character %U", r))
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "":
			return bad("has an empty segment (//)")
		case ".":
			return bad(`has a "." segment`)
		case "..":
			return bad(`has a ".." segment`)
		}
	}
	return nil
}

// CheckUnreserved is Check plus the rule that no segment may start with
// ".distributor", the namespace reserved for the tool's own files.
func CheckUnreserved(p string) error {
	if err := Check(p); err != nil {
		return err
	}
	if HasReservedSegment(p) {
		return &Error{Path: p, Reason: fmt.Sprintf("has a segment starting with %q (reserved for distributor's own files)", ReservedPrefix)}
	}
	return nil
}

// HasReservedSegment reports whether any segment of p starts with ReservedPrefix.
func HasReservedSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if strings.HasPrefix(seg, ReservedPrefix) {
			return true
		}
	}
	return false
}
