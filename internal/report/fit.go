package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Text reports fit their width (80 columns, or the terminal's): a fitter wraps prose at spaces; lines listing
// paths cut the path (pathLine) so each entry keeps one line; the state table drops and narrows columns.

// minPath is the fewest runes a path is cut to so that its line fits.
const minPath = 24

// maxLabel is the longest first part of a line fitLine keeps with the next.
const maxLabel = 12

const ellipsis = "…"

// fitter writes lines to w, each wrapped to width runes (0: no limit).
type fitter struct {
	w     io.Writer
	width int
	line  []byte // the line written so far, without its newline
	err   error
}

func newFitter(w io.Writer, width int) *fitter { return &fitter{w: w, width: width} }

// Write writes every complete line of p, fitted; the rest waits for flush.
func (f *fitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && f.err == nil {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			f.line = append(f.line, p...)
			break
		}
		f.line = append(f.line, p[:i]...)
		f.emit("\n")
		p = p[i+1:]
	}
	if f.err != nil {
		return 0, f.err
	}
	return n, nil
}

// flush writes the last line if it has no newline.
func (f *fitter) flush() {
	if len(f.line) > 0 && f.err == nil {
		f.emit("")
	}
}

// emit writes the line, fitted, and end after it.
func (f *fitter) emit(end string) {
	_, f.err = io.WriteString(f.w, strings.Join(fitLine(string(f.line), f.width), "\n")+end)
	f.line = f.line[:0]
}

// pathLine writes prefix, path and suffix as one line, the path cut in its middle
// to fit (after prefix alone, the suffix wrapped, if it leaves less than minPath).
func (f *fitter) pathLine(prefix, path, suffix string) {
	if f.width > 0 {
		room := f.width - runeLen(prefix) - runeLen(suffix)
		if room < minPath {
			room = f.width - runeLen(prefix)
		}
		path = elide(path, max(room, minPath))
	}
	fmt.Fprintf(f, "%s%s%s\n", prefix, path, suffix)
}

// list writes format for each item, its later lines indented by indent ("": as they are).
func (f *fitter) list(format, indent string, items []string) {
	for _, it := range items {
		if indent != "" {
			it = indentLines(it, indent)
		}
		fmt.Fprintf(f, format, it)
	}
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// elide cuts s in its middle to n runes (n < 3 keeps s); the end keeps the
// larger half: a path's file name, a digest's last digits.
func elide(s string, n int) string {
	if n < 3 || runeLen(s) <= n {
		return s
	}
	r := []rune(s)
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + ellipsis + string(r[len(r)-tail:])
}

// fitLine wraps line to width runes, continuations indented two more, breaking first at
// runs of two or more spaces, then single spaces; a too-long word is cut in its middle.
func fitLine(line string, width int) []string {
	if width <= 0 || runeLen(line) <= width {
		return []string{line}
	}
	text := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(text)]
	cont := indent + "  "
	if runeLen(cont) > width/2 {
		cont = indent // deep lines continue where they start
	}
	parts := splitSpaces(text, 2)
	if len(parts) > 1 && runeLen(parts[0].text) <= maxLabel {
		// A label ("source", "create", "MISSING") stays with what it
		// labels, and the lines that continue it start under that.
		if hang := indent + strings.Repeat(" ", runeLen(parts[0].text+parts[0].sep)); runeLen(hang) <= width/2 {
			cont = hang
		}
		parts[1].text = parts[0].text + parts[0].sep + parts[1].text
		parts = parts[1:]
	}
	l := &lineFill{width: width, cont: cont, cur: indent, n: runeLen(indent), empty: true}
	for _, part := range parts {
		if !l.empty && !l.fits(part.text) {
			l.newLine()
		}
		if l.fits(part.text) {
			l.add(part.text, part.sep)
			continue
		}
		words := splitSpaces(part.text, 1)
		for i, w := range words {
			sep := w.sep
			if i == len(words)-1 {
				sep = part.sep
			}
			l.word(w.text, sep)
		}
	}
	return append(l.out, strings.TrimRight(l.cur, " "))
}

// lineFill is fitLine's state: lines done and the one being filled.
type lineFill struct {
	width int
	cont  string
	out   []string
	cur   string
	n     int
	empty bool
}

func (l *lineFill) fits(s string) bool { return l.n+runeLen(s) <= l.width }

func (l *lineFill) add(s, sep string) {
	l.cur += s + sep
	l.n += runeLen(s) + runeLen(sep)
	l.empty = false
}

func (l *lineFill) newLine() {
	l.out = append(l.out, strings.TrimRight(l.cur, " "))
	l.cur, l.n, l.empty = l.cont, runeLen(l.cont), true
}

// word adds one word, on a new line when it does not fit; a word that fits
// no line is cut, where it stands if this line has nearly a new one's room.
func (l *lineFill) word(w, sep string) {
	room, fresh := l.width-l.n, l.width-runeLen(l.cont)
	if !l.empty && !l.fits(w) && (runeLen(w) <= fresh || 4*room < 3*fresh) {
		l.newLine()
	}
	if !l.fits(w) {
		w = elide(w, l.width-l.n)
	}
	l.add(w, sep)
}

type spaced struct{ text, sep string }

// splitSpaces splits s at runs of at least n spaces, kept as each sep.
func splitSpaces(s string, n int) []spaced {
	var out []spaced
	gap := strings.Repeat(" ", n)
	for s != "" {
		i := strings.Index(s, gap)
		if i < 0 {
			return append(out, spaced{s, ""})
		}
		rest := strings.TrimLeft(s[i:], " ")
		out = append(out, spaced{s[:i], s[i : len(s)-len(rest)]})
		s = rest
	}
	return out
}

// table is a text table fitted to a width: columns can be dropped or narrowed to a minimum. It holds no
// rows: they are measured (grow), then written (writeRow), so a million rows take no more memory than ten.
type table struct {
	heads []string
	min   []int  // the narrowest each column may be cut to; 0: never cut
	gone  []bool // the columns left out
	wide  []int  // each column's widest cell, its head's included
}

func newTable(heads []string, min []int) *table {
	t := &table{heads: heads, min: min, gone: make([]bool, len(heads)), wide: make([]int, len(heads))}
	t.grow(heads...)
	return t
}

func (t *table) grow(cells ...string) {
	for i, c := range cells {
		t.wide[i] = max(t.wide[i], runeLen(c))
	}
}

func (t *table) drop(i int) { t.gone[i] = true }

// widths returns each column's widest cell (with narrow, at most its min).
func (t *table) widths(narrow bool) []int {
	ws := make([]int, len(t.heads))
	for i := range t.heads {
		if t.gone[i] {
			continue
		}
		ws[i] = t.wide[i]
		if narrow && t.min[i] > 0 {
			ws[i] = min(ws[i], t.min[i])
		}
	}
	return ws
}

func (t *table) total(ws []int) int {
	n, cols := 0, 0
	for i, w := range ws {
		if !t.gone[i] {
			n += w
			cols++
		}
	}
	return n + 2*max(cols-1, 0)
}

// fits reports whether the table fits width (narrow: at the minimums).
func (t *table) fits(width int, narrow bool) bool {
	return width <= 0 || t.total(t.widths(narrow)) <= width
}

// fit narrows the widest narrowable column a rune at a time until it fits.
func (t *table) fit(width int) []int {
	ws := t.widths(false)
	for width > 0 && t.total(ws) > width {
		widest := -1
		for i, cw := range ws {
			if !t.gone[i] && t.min[i] > 0 && cw > t.min[i] && (widest < 0 || cw > ws[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		ws[widest]--
	}
	return ws
}

func (t *table) writeRow(w io.Writer, ws []int, cells []string) {
	var b strings.Builder
	for i, c := range cells {
		if !t.gone[i] {
			c = elide(c, ws[i])
			b.WriteString(c + strings.Repeat(" ", ws[i]-runeLen(c)+2))
		}
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
}

// Doc is a document with a text rendering, which Text writes.
type Doc interface{ text(w *fitter) }

// Text renders doc for a human, fitted to width columns (0: no limit).
func Text(out io.Writer, doc Doc, width int) {
	w := newFitter(out, width)
	doc.text(w)
	w.flush()
}
