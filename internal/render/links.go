package render

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/yuin/goldmark/ast"
)

// BrokenLink is a relative link or image of a rendered Markdown page whose
// target is nothing the destination publishes.
type BrokenLink struct {
	Source string // the Markdown file's bundle path
	Line   int    // 1-based line of the link's "[" or the image's "!", 0 if unknown
	Image  bool
	Target string // the link's destination as written (entities resolved)
	Reason string // what is missing
}

// String is the warning: "report.md:3: link to "x.md": no file x.md in the bundle".
func (l BrokenLink) String() string {
	at := l.Source
	if l.Line > 0 {
		at = fmt.Sprintf("%s:%d", l.Source, l.Line)
	}
	what := "link to"
	if l.Image {
		what = "image"
	}
	return fmt.Sprintf("%s: %s %q: %s", at, what, l.Target, l.Reason)
}

// BrokenLinksError is Plan's error for broken links with links.missing: fail.
type BrokenLinksError struct {
	Links []BrokenLink // by source path, then line
}

// brokenShown is how many broken links an error names.
const brokenShown = 10

func (e *BrokenLinksError) Error() string {
	parts := make([]string, 0, min(len(e.Links), brokenShown)+1)
	for _, l := range e.Links[:min(len(e.Links), brokenShown)] {
		parts = append(parts, l.String())
	}
	if n := len(e.Links) - brokenShown; n > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", n))
	}
	noun := "links"
	if len(e.Links) == 1 {
		noun = "link"
	}
	return fmt.Sprintf("%d broken %s (links.missing is fail: fix them, or set links.missing: warn to publish anyway): %s",
		len(e.Links), noun, strings.Join(parts, "; "))
}

// linkTargets is what a relative link may point at: outputs, index page, feed, their directories.
type linkTargets struct {
	paths    map[string]bool
	prefix   string // paths.prefix: a link leaving it is not checked
	manifest *bundle.Manifest
}

func newLinkTargets(d *config.Destination, outs []planned, prefix string, m *bundle.Manifest) *linkTargets {
	t := &linkTargets{paths: make(map[string]bool, len(outs)+len(outs)/4+1), prefix: prefix, manifest: m}
	add := func(p string) {
		t.paths[p] = true
		for dir := path.Dir(p); !t.paths[dir]; dir = path.Dir(dir) {
			t.paths[dir] = true // "." (the root) ends the walk
		}
	}
	for _, p := range outs {
		add(p.out.Path)
	}
	if d.Index != nil {
		add(d.Index.Path)
		if d.Index.Feed != "" {
			add(d.Index.Feed)
		}
	}
	return t
}

// check returns why the relative reference p of the page info is broken, or "" when it points at
// something published or outside the publication (above the root, or out of the paths.prefix folder: unknown here).
func (t *linkTargets) check(info *docInfo, p string) string {
	out := path.Join(path.Dir(info.outputPath), p)
	if t.paths[out] || out == ".." || strings.HasPrefix(out, "../") || !strings.HasPrefix(out, t.prefix) {
		return ""
	}
	in := path.Join(path.Dir(info.sourcePath), p)
	if in == ".." || strings.HasPrefix(in, "../") {
		return "nothing is published at " + out
	}
	if _, ok := t.manifest.Lookup(in); ok && out == t.prefix+in {
		return fmt.Sprintf("this destination does not publish the bundle's %s", in)
	} else if ok {
		return fmt.Sprintf("the bundle has %s, but this destination publishes nothing at %s", in, out)
	}
	return fmt.Sprintf("no file %s in the bundle", in)
}

// lineOf is the 1-based line of n (or its nearest positioned ancestor), or 0.
func lineOf(n ast.Node, src []byte) int {
	for ; n != nil; n = n.Parent() {
		if pos := n.Pos(); pos >= 0 && pos <= len(src) {
			return bytes.Count(src[:pos], []byte{'\n'}) + 1
		}
	}
	return 0
}
