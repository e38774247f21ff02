package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestElide(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abcdef", -1, "abcdef"},
		{"abcdef", 2, "abcdef"}, // too narrow to cut
		{"abcdefgh", 5, "ab…gh"},
		{"abcdefghi", 6, "ab…ghi"}, // the end keeps the larger half
		{"ééééééé", 4, "é…éé"},     // runes, not bytes
	} {
		if got := elide(tc.s, tc.n); got != tc.want {
			t.Errorf("elide(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestFitLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		width      int
		want       []string
	}{
		{"fits", "  short line", 20, []string{"  short line"}},
		{"no limit", strings.Repeat("x ", 100), 0, []string{strings.Repeat("x ", 100)}},
		{"prose wraps two columns in", "  warning: one two three four five six", 20,
			[]string{"  warning: one two", "    three four five", "    six"}},
		{"parts first", "  destination site  /srv/www/reports  (local, additive)", 36,
			[]string{"  destination site  /srv/www/reports", "    (local, additive)"}},
		{"a label keeps its value, hanging", "  source   r.one  (created 2026-06-19)", 31,
			[]string{"  source   r.one", "           (created 2026-06-19)"}},
		{"a word too long is cut on a line of its own", "  see the /a/very/long/path/name/here ok", 20,
			[]string{"  see the", "    /a/very…ame/here", "    ok"}},
		{"cut where it stands when the room is nearly a line's", "  url https://example.com/a/b/c/d/e/f", 24,
			[]string{"  url https://…b/c/d/e/f"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fitLine(tc.line, tc.width)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("fitLine(%q, %d):\n%s\nwant:\n%s", tc.line, tc.width, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for _, l := range got {
				if n := utf8.RuneCountInString(l); tc.width > 0 && n > tc.width {
					t.Errorf("%q: %d runes, more than %d", l, n, tc.width)
				}
			}
		})
	}
}

func TestFitterPathLine(t *testing.T) {
	var b strings.Builder
	f := newFitter(&b, 50)
	f.pathLine("    create     ", "a/very/long/path/to/some/report/file.html", "  (2 B)")
	f.pathLine("    create     ", "index.html", "  (2 B)")
	f.pathLine("  MISSING  ", "short.txt", "  (weather.daily/latest): recorded, not in storage")
	f.flush()
	want := "    create     a/very/long/p…port/file.html  (2 B)\n" +
		"    create     index.html  (2 B)\n" +
		"  MISSING  short.txt\n" +
		"           (weather.daily/latest): recorded, not\n" +
		"           in storage\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTableFits(t *testing.T) {
	tb := newTable([]string{"PATH", "KIND", "URL"}, []int{6, 0, 0})
	rows := [][]string{{"a/long/path/name.txt", "source", "https://example.com/a/long/path/name.txt"}, {"b.txt", "generated", "-"}}
	for _, r := range rows {
		tb.grow(r...)
	}
	if tb.fits(40, false) {
		t.Fatal("fits 40 columns with the url")
	}
	tb.drop(2)
	if !tb.fits(40, true) {
		t.Fatal("does not fit 40 columns without the url")
	}
	var b strings.Builder
	ws := tb.fit(20)
	for _, r := range append([][]string{tb.heads}, rows...) {
		tb.writeRow(&b, ws, r)
	}
	want := "PATH       KIND\n" +
		"a/lo….txt  source\n" +
		"b.txt      generated\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
