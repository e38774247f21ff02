package glob

import "testing"

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"**", "a", true},
		{"**", "a/b/c.txt", true},
		{"*", "a", true},
		{"*", "a/b", false},
		{"*.md", "report.md", true},
		{"*.md", "sub/report.md", false},
		{"**/*.md", "report.md", true},
		{"**/*.md", "a/b/report.md", true},
		{"**/*.md", "report.markdown", false},
		{"drafts/**", "drafts/a.md", true},
		{"drafts/**", "drafts/x/y/z.png", true},
		{"drafts/**", "drafts", true},
		{"drafts/**", "notdrafts/a.md", false},
		{"drafts/**", "a/drafts/b.md", false},
		{"**/drafts/**", "a/drafts/b.md", true},
		{"**/*.tmp", "x.tmp", true},
		{"**/*.tmp", "a/x.tmp", true},
		{"**/*.tmp", "a/x.tmp.md", false},
		{"**/*.{css,js,png,svg}", "img/a.svg", true},
		{"**/*.{css,js,png,svg}", "style.css", true},
		{"**/*.{css,js,png,svg}", "a/b.jsx", false},
		{"{index,about}.html", "about.html", true},
		{"{index,about}.html", "contact.html", false},
		{"report-??.csv", "report-01.csv", true},
		{"report-??.csv", "report-1.csv", false},
		{"[a-c]*.txt", "b1.txt", true},
		{"[!a-c]*.txt", "b1.txt", false},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/x/c", false},
		{"a/**/c", "a/c", true},
		{"a/**/c", "a/b/x/c", true},
		{"Report.md", "report.md", false}, // case-sensitive
		{`\*.md`, "*.md", true},
		{`\*.md`, "a.md", false},
		{"[", "[", false}, // malformed: matches nothing
	} {
		if got := Match(tc.pattern, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, ok := range []string{"**", "*.md", "a/**/b", "{a,b}/*.{png,svg}", `\[x\]`} {
		if err := Validate(ok); err != nil {
			t.Errorf("Validate(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/abs/*", "[abc", "{a,b", `a\`} {
		if err := Validate(bad); err == nil {
			t.Errorf("Validate(%q) accepted a bad pattern", bad)
		}
	}
}
