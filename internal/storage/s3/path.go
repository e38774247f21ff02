package s3

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/distributor-dev/distributor/internal/storage"
)

// checkPath reports whether p is a path this store accepts: a clean,
// relative, slash-separated path none of whose segments is a temporary name.
// The rules are those of internal/cleanpath, which a storage package may not
// import. Because p has no "." or ".." segment, joining it to the root can
// never name anything outside the root. The error matches
// storage.ErrInvalidPath.
func checkPath(p string) error {
	if reason := unclean(p); reason != "" {
		return fmt.Errorf("%w: %q %s", storage.ErrInvalidPath, p, reason)
	}
	return nil
}

// unclean returns why p is not an addressable path, or "" if it is.
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
	case strings.ContainsFunc(p, unicode.IsControl):
		return "contains a control character"
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return "has an empty segment"
		case seg == "." || seg == "..":
			return fmt.Sprintf("has a %q segment", seg)
		case strings.HasPrefix(seg, storage.TempPrefix):
			return fmt.Sprintf("has a segment starting with %q (temporary files)", storage.TempPrefix)
		}
	}
	return ""
}

// splitPrefix splits a List prefix into its directory part (before the last
// slash, "" if none) and the name prefix that follows. The directory part
// must be a clean path.
func splitPrefix(prefix string) (dir, filter string, err error) {
	bad := func(reason string) error {
		return fmt.Errorf("%w: prefix %q %s", storage.ErrInvalidPath, prefix, reason)
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
	if err := checkPath(dir); err != nil {
		return "", "", err
	}
	return dir, filter, nil
}
