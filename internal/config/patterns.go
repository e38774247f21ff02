package config

import "strings"

const (
	digits     = "0123456789"
	letters    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	lowerDigit = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// charPattern is an anchored pattern ^[first][rest]{min,max}$ over ASCII
// classes; expr is it as a regular expression (a test checks both agree).
type charPattern struct {
	expr        string
	first, rest string // character classes
	min, max    int    // bounds on the count of rest characters; max -1: none
}

// MatchString reports whether s matches the pattern.
func (p charPattern) MatchString(s string) bool {
	if len(s) == 0 || !inClass(p.first, s[0]) {
		return false
	}
	mid := s[1:]
	if len(mid) < p.min || (p.max >= 0 && len(mid) > p.max) {
		return false
	}
	for i := 0; i < len(mid); i++ {
		if !inClass(p.rest, mid[i]) {
			return false
		}
	}
	return true
}

// inClass reports whether c is one of class's (ASCII) characters.
func inClass(class string, c byte) bool {
	return c < 0x80 && strings.IndexByte(class, c) >= 0
}
