// Package glob matches slash-separated paths against the glob patterns of
// the configuration (publish.include / publish.exclude, headers[].match):
//
//   - "*" matches any run of characters within one path segment,
//   - "?" one character of a segment, "[abc]" / "[a-z]" / "[!a]" classes,
//   - "**" as a whole segment matches any number of segments, zero included
//     ("**/*.html" matches "index.html" and "a/b/c.html"),
//   - "{a,b}" matches either alternative (alternatives may hold "/"),
//   - "\" escapes the next character.
//
// Matching is case-sensitive and byte-exact, like the paths it matches. It is
// github.com/bmatcuk/doublestar/v4 (several static-site and object-storage
// tools' matcher) behind a small API, so that the rules are stated and tested here.
package glob

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Validate reports whether pattern is a usable glob: well formed (closed
// brackets and braces), not empty, not absolute.
func Validate(pattern string) error {
	switch {
	case pattern == "":
		return fmt.Errorf("empty pattern")
	case strings.HasPrefix(pattern, "/"):
		return fmt.Errorf("pattern %q must be relative (no leading /): it matches paths inside the bundle or the destination root", pattern)
	case !doublestar.ValidatePattern(pattern):
		return fmt.Errorf("pattern %q is malformed (an unclosed [ or {, or a trailing \\)", pattern)
	}
	return nil
}

// Match reports whether the clean relative path p matches pattern. A
// malformed pattern (see Validate) matches nothing.
func Match(pattern, p string) bool {
	ok, err := doublestar.Match(pattern, p)
	return err == nil && ok
}
