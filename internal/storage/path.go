package storage

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckPath reports whether p is a path a Store accepts: clean, relative,
// slash-separated, non-empty, valid UTF-8, without backslash, control
// character or temporary segment (internal/cleanpath's rules, which storage
// may not import), so that joined to a root it never leaves it. The error
// matches ErrInvalidPath.
func CheckPath(p string) error {
	if reason := unclean(p); reason != "" {
		return fmt.Errorf("%w: %q %s", ErrInvalidPath, p, reason)
	}
	return nil
}

func unclean(p string) string {
	switch {
	case p == "":
		return "is empty"
	case !utf8.ValidString(p):
		return "is not valid UTF-8"
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	case strings.HasSuffix(p, "/"):
		return "ends with /"
	case strings.ContainsRune(p, '\\'):
		return "contains a backslash"
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return fmt.Sprintf("contains control character %U", r)
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return "has an empty segment"
		case seg == "." || seg == "..":
			return fmt.Sprintf("has a %q segment", seg)
		case strings.HasPrefix(seg, TempPrefix):
			return fmt.Sprintf("has a segment starting with %q (temporary files)", TempPrefix)
		}
	}
	return ""
}

// SplitPrefix splits a List prefix into its directory part (before the last
// slash, "" if none) and the name prefix that follows. The directory part
// must pass CheckPath; the error matches ErrInvalidPath.
func SplitPrefix(prefix string) (dir, filter string, err error) {
	bad := func(reason string) error {
		return fmt.Errorf("%w: prefix %q %s", ErrInvalidPath, prefix, reason)
	}
	switch {
	case !utf8.ValidString(prefix):
		return "", "", bad("is not valid UTF-8")
	case strings.HasPrefix(prefix, "/"):
		return "", "", bad("is absolute")
	case strings.ContainsRune(prefix, '\\'):
		return "", "", bad("contains a backslash")
	case strings.ContainsFunc(prefix, unicode.IsControl):
		return "", "", bad("contains a control character")
	}
	i := strings.LastIndexByte(prefix, '/')
	if i < 0 {
		return "", prefix, nil
	}
	dir, filter = prefix[:i], prefix[i+1:]
	if err := CheckPath(dir); err != nil {
		return "", "", err
	}
	return dir, filter, nil
}

// CheckSweepDirs checks SweepOptions.Dirs ("" or CheckPath each) and returns
// them sorted and deduplicated; nil stays nil (the whole root), empty empty.
func CheckSweepDirs(dirs []string) ([]string, error) {
	if dirs == nil {
		return nil, nil
	}
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if d != "" {
			if err := CheckPath(d); err != nil {
				return nil, fmt.Errorf("sweep directory: %w", err)
			}
		}
		out = append(out, d)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
