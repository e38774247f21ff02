package cleanpath_test

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/distributor-dev/distributor/internal/cleanpath"
)

// checkCase is one path and what Check and CheckUnreserved say about it.
type checkCase struct {
	name string
	p    string
	// err is a fragment of Check's reason, or "" when Check accepts p.
	err string
	// reserved is set when Check accepts p but CheckUnreserved rejects it
	// for a segment starting with ".distributor".
	reserved bool
}

var checkCases = []checkCase{
	// Rejected by Check (and so by CheckUnreserved), one rule each.
	{name: "empty", p: "", err: "is empty"},
	{name: "1025 bytes", p: strings.Repeat("a", 1025), err: "longer than 1024 bytes"},
	{name: "1025 bytes in segments", p: strings.Repeat("abc/", 256) + "a", err: "longer than 1024 bytes"},
	{name: "1025 bytes multibyte", p: strings.Repeat("é", 512) + "a", err: "longer than 1024 bytes"},
	{name: "invalid utf8 byte", p: "\xff", err: "not valid UTF-8"},
	{name: "invalid utf8 truncated", p: "dir/caf\xc3", err: "not valid UTF-8"},
	{name: "invalid utf8 surrogate", p: "a\xed\xa0\x80b", err: "not valid UTF-8"},
	{name: "invalid utf8 overlong slash", p: "a\xc0\xafb", err: "not valid UTF-8"},
	{name: "absolute", p: "/etc/passwd", err: "absolute"},
	{name: "root", p: "/", err: "absolute"},
	{name: "double leading slash", p: "//x", err: "absolute"},
	{name: "trailing slash", p: "dir/", err: "ends with /"},
	{name: "backslash", p: `a\b`, err: "backslash"},
	{name: "backslash traversal", p: `..\..\etc\passwd`, err: "backslash"},
	{name: "lone backslash", p: `\`, err: "backslash"},
	{name: "NUL", p: "a\x00b", err: "U+0000"},
	{name: "tab", p: "a\tb", err: "U+0009"},
	{name: "newline", p: "report\n.md", err: "U+000A"},
	{name: "carriage return", p: "a\r", err: "U+000D"},
	{name: "escape", p: "\x1b[31mred", err: "U+001B"},
	{name: "DEL", p: "a\x7fb", err: "U+007F"},
	{name: "NEL U+0085", p: "a\u0085b", err: "U+0085"},
	{name: "C1 U+009F", p: "x/\u009f", err: "U+009F"},
	{name: "empty segment", p: "a//b", err: "empty segment"},
	{name: "dot", p: ".", err: `"." segment`},
	{name: "leading dot segment", p: "./a", err: `"." segment`},
	{name: "inner dot segment", p: "a/./b", err: `"." segment`},
	{name: "trailing dot segment", p: "a/.", err: `"." segment`},
	{name: "dotdot", p: "..", err: `".." segment`},
	{name: "leading dotdot", p: "../x", err: `".." segment`},
	{name: "inner dotdot", p: "a/../b", err: `".." segment`},
	{name: "trailing dotdot", p: "a/..", err: `".." segment`},
	{name: "deep dotdot", p: "a/b/c/../../../../etc/passwd", err: `".." segment`},

	// Clean, but reserved for distributor's own files.
	{name: "catalog", p: ".distributor.json", reserved: true},
	{name: "lock", p: ".distributor.lock", reserved: true},
	{name: "lock claim", p: ".distributor.lock.claim-1", reserved: true},
	{name: "journal", p: ".distributor.journal", reserved: true},
	{name: "temp", p: ".distributor-tmp-abc", reserved: true},
	{name: "bare prefix", p: ".distributor", reserved: true},
	{name: "prefix with suffix", p: ".distributorx", reserved: true},
	{name: "reserved directory", p: ".distributor/x.html", reserved: true},
	{name: "reserved nested", p: "a/.distributor.json", reserved: true},
	{name: "reserved deep", p: "a/b/.distributor-tmp-1/c", reserved: true},

	// Odd but clean: accepted by both.
	{name: "plain", p: "report.md"},
	{name: "nested", p: "a/b/c.html"},
	{name: "unicode", p: "日本語/レポート.md"},
	{name: "accents", p: "café/naïve.txt"},
	{name: "emoji", p: "weather 🌦/chart.svg"},
	{name: "spaces", p: "with space/and more .txt"},
	{name: "leading space", p: " leading"},
	{name: "hash", p: "#anchor#.html"},
	{name: "percent", p: "100%.txt"},
	{name: "percent-encoded dotdot", p: "%2e%2e/x"},
	{name: "three dots", p: "..."},
	{name: "three dots segment", p: "a/.../b"},
	{name: "dotdot prefix", p: "..hidden"},
	{name: "dotdot suffix", p: "x.."},
	{name: "hidden", p: ".hidden"},
	{name: "hidden dir", p: "a/.hidden/b"},
	{name: "distributor without dot", p: "distributor.json"},
	{name: "distributor not leading", p: "x.distributor.json"},
	{name: "distributor in dir name", p: "a/x.distributor/b"},
	{name: "shell metacharacters", p: "a;b|c&d$(e)`f`*?<>:\"'"},
	{name: "tilde", p: "~/x"},
	{name: "1024 bytes", p: strings.Repeat("a", 1024)},
	{name: "1024 bytes multibyte", p: strings.Repeat("é", 512)},
	{name: "max segments", p: strings.Repeat("a/", 511) + "bc"},
}

func TestCheck(t *testing.T) {
	for _, tc := range checkCases {
		t.Run(tc.name, func(t *testing.T) {
			err := cleanpath.Check(tc.p)
			uerr := cleanpath.CheckUnreserved(tc.p)
			switch {
			case tc.err != "":
				wantRejected(t, "Check", tc.p, err, tc.err)
				wantRejected(t, "CheckUnreserved", tc.p, uerr, tc.err)
			case tc.reserved:
				if err != nil {
					t.Fatalf("Check(%q) = %v, want nil", tc.p, err)
				}
				wantRejected(t, "CheckUnreserved", tc.p, uerr, "reserved")
				if !cleanpath.HasReservedSegment(tc.p) {
					t.Errorf("HasReservedSegment(%q) = false, want true", tc.p)
				}
			default:
				if err != nil {
					t.Errorf("Check(%q) = %v, want nil", tc.p, err)
				}
				if uerr != nil {
					t.Errorf("CheckUnreserved(%q) = %v, want nil", tc.p, uerr)
				}
				if cleanpath.HasReservedSegment(tc.p) {
					t.Errorf("HasReservedSegment(%q) = true, want false", tc.p)
				}
			}
		})
	}
}

// wantRejected checks that err is a *cleanpath.Error about p whose reason
// contains frag.
func wantRejected(t *testing.T, fn, p string, err error, frag string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s(%q) = nil, want an error containing %q", fn, p, frag)
	}
	var ce *cleanpath.Error // what errors.As finds through any wrapping
	if !errors.As(err, &ce) {
		t.Fatalf("%s(%q) = %T, want *cleanpath.Error", fn, p, err)
	}
	if ce.Path != p {
		t.Errorf("%s(%q): Error.Path = %q, want the path checked", fn, p, ce.Path)
	}
	if !strings.Contains(ce.Reason, frag) {
		t.Errorf("%s(%q): reason %q does not contain %q", fn, p, ce.Reason, frag)
	}
	if !strings.Contains(err.Error(), ce.Reason) {
		t.Errorf("%s(%q): message %q does not contain the reason %q", fn, p, err.Error(), ce.Reason)
	}
}

func FuzzCheck(f *testing.F) {
	for _, tc := range checkCases {
		f.Add(tc.p)
	}
	for _, s := range []string{"a/b/../c", "a\\..\\b", "./", "/.", "..//", "\u2028", "\ufeffx", "a\x00/..", ".distributor/..", strings.Repeat("../", 400)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := cleanpath.Check(p)
		uerr := cleanpath.CheckUnreserved(p)
		reserved := cleanpath.HasReservedSegment(p)

		// CheckUnreserved is exactly Check plus the reserved-name rule.
		switch {
		case err != nil && uerr == nil:
			t.Fatalf("CheckUnreserved(%q) accepts what Check rejects: %v", p, err)
		case err == nil && reserved && uerr == nil:
			t.Fatalf("CheckUnreserved(%q) accepts a reserved segment", p)
		case err == nil && !reserved && uerr != nil:
			t.Fatalf("CheckUnreserved(%q) = %v for a clean unreserved path", p, uerr)
		}
		for _, e := range []error{err, uerr} {
			if e == nil {
				continue
			}
			var ce *cleanpath.Error
			if !errors.As(e, &ce) || ce.Path != p || ce.Reason == "" {
				t.Fatalf("error for %q is not a *cleanpath.Error naming the path and a reason: %#v", p, e)
			}
		}
		if err != nil {
			return
		}

		// Properties of every accepted path.
		if path.Clean(p) != p {
			t.Errorf("accepted %q, but path.Clean gives %q", p, path.Clean(p))
		}
		if path.IsAbs(p) {
			t.Errorf("accepted absolute %q", p)
		}
		if len(p) == 0 || len(p) > cleanpath.MaxLen {
			t.Errorf("accepted %q of %d bytes", p, len(p))
		}
		if !utf8.ValidString(p) {
			t.Errorf("accepted invalid UTF-8 %q", p)
		}
		if strings.ContainsRune(p, '\\') {
			t.Errorf("accepted %q with a backslash", p)
		}
		for _, r := range p {
			if unicode.IsControl(r) {
				t.Errorf("accepted %q with control character %U", p, r)
			}
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Errorf("accepted %q with segment %q", p, seg)
			}
		}
	})
}
