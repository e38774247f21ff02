package report

import (
	"cmp"
	"errors"
	"net"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// BriefMax is about the longest error line Brief aims for.
const BriefMax = 300

// briefHint ends a shortened message: where the whole one is.
const briefHint = " (-v or --output json: the whole error)"

// Brief is a network failure's message (chain holds an *url.Error or
// *net.OpError) for a report line: what failed, where, why and what next,
// in about BriefMax bytes. Any other error is err.Error() unchanged.
//
// Brief drops what outer layers already said and an *url.Error's request
// line, shortens URLs, long asides and trailing accounts, adds a next step
// when none is named, cuts the middle of what is still too long, and ends
// a shortened message with where the whole error is.
func Brief(err error) string {
	if err == nil {
		return ""
	}
	if s, ok := briefSplit(err); ok {
		return s
	}
	full := err.Error()
	s, b := shorten(err)
	if b.network && !strings.Contains(s, "next ") {
		s += "; check that " + cmp.Or(b.host, "the server") + " is up and reachable from here, then rerun"
	}
	if s == full {
		return s
	}
	server := ""
	if b.host != "" {
		server = " (server " + b.host + ")"
	}
	if len(s) > BriefMax-len(briefHint) {
		s = cutMiddle(s, BriefMax-len(briefHint)-len(server))
		if !strings.Contains(s, b.host) {
			s += server // the cut took it
		}
	}
	return s + briefHint
}

// splitter is an error that joins a failure with a statement about what followed it (txn.FencedError): its
// brief shortens the failure and keeps the statement whole, which is what the operator must read.
type splitter interface {
	error
	Split() (cause error, note string)
}

// briefSplit is Brief of an error holding a splitter: the cause shortened to the room left, the statement whole.
func briefSplit(err error) (string, bool) {
	var sp splitter
	if !errors.As(err, &sp) {
		return "", false
	}
	full, inner := err.Error(), sp.Error()
	i := strings.Index(full, inner)
	if i < 0 {
		return "", false
	}
	pre, suf := full[:i], full[i+len(inner):]
	cause, note := sp.Split()
	c := Short(cause)
	if room := BriefMax - len(briefHint) - len(pre) - len(note) - len(suf) - 2; len(c) > room {
		c = cutMiddle(c, max(room, 60))
	}
	s := pre + c + "; " + note + suf
	if s == full {
		return s, true
	}
	return s + briefHint, true
}

// Short is err's message shortened as Brief does, with no next step or
// hint added: for a log line that the whole error follows at debug level.
func Short(err error) string {
	if err == nil {
		return ""
	}
	s, _ := shorten(err)
	return s
}

// Errors returns the report fields of err: the brief message (error) and
// the whole one (error_detail), both nil for a nil err.
func Errors(err error) (brief, detail *string) {
	if err == nil {
		return nil, nil
	}
	return Str(Brief(err)), Str(err.Error())
}

func shorten(err error) (string, layers) {
	full := err.Error()
	b := decompose(err)
	if !b.network {
		// Only a network failure's layers repeat each other (URLs, every
		// attempt); any other message is the one its writer meant.
		return full, b
	}
	var out strings.Builder
	seen := ""
	for _, p := range b.prefixes {
		if p = dropLongAsides(p); p == "" || allSeen(p, seen) {
			continue
		}
		out.WriteString(p)
		seen += p
	}
	out.WriteString(urlRE.ReplaceAllString(b.leaf, "$1"))
	long := len(full) > BriefMax
	for i := len(b.suffixes) - 1; i >= 0; i-- {
		suf := dropLongAsides(b.suffixes[i])
		if long {
			suf = nextSteps(suf)
		}
		out.WriteString(suf)
	}
	s := out.String()
	if b.host != "" && !strings.Contains(s, b.host) {
		s += " (server " + b.host + ")"
	}
	return s, b
}

// layers is an error chain taken apart: the text each layer adds before
// and after what it wraps (outermost first), and the innermost message.
type layers struct {
	prefixes, suffixes []string
	leaf               string
	// network: the chain holds an *url.Error or *net.OpError; host: the server.
	network bool
	host    string
}

func decompose(err error) layers {
	var b layers
	for e := err; ; {
		if ue, ok := errors.AsType[*url.Error](e); ok {
			b.network = true
			if u, perr := url.Parse(ue.URL); perr == nil && b.host == "" {
				b.host = u.Host
			}
		}
		if oe, ok := errors.AsType[*net.OpError](e); ok {
			b.network = true
			if oe.Addr != nil && b.host == "" {
				b.host = oe.Addr.String()
			}
		}
		if _, ok := e.(*net.OpError); ok {
			b.leaf = e.Error() // "dial tcp 10.0.0.1:22: connect: connection refused"
			return b
		}
		inner := errors.Unwrap(e)
		msg := e.Error()
		if inner == nil {
			b.leaf = msg
			return b
		}
		im := inner.Error()
		i := strings.Index(msg, im)
		if im == "" || i < 0 {
			b.leaf = msg
			return b
		}
		pre, suf := msg[:i], msg[i+len(im):]
		if _, ok := e.(*url.Error); ok {
			pre = "" // `Put "https://host/whole/key": `
		}
		b.prefixes = append(b.prefixes, pre)
		b.suffixes = append(b.suffixes, suf)
		e = inner
	}
}

// allSeen reports whether every word of p occurs in seen already (as in
// "s3://bucket/root: read x: " below "read x at s3://bucket/root: ").
func allSeen(p, seen string) bool {
	words := strings.Fields(p)
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		w = strings.TrimSuffix(w, ":")
		if w != "" && w != `""` && !strings.Contains(seen, w) {
			return false
		}
	}
	return true
}

// longAside is how long a parenthesised aside may be and stay.
const longAside = 40

// dropLongAsides removes the parenthesised parts of s longer than longAside.
func dropLongAsides(s string) string {
	var out strings.Builder
	for {
		open := strings.IndexByte(s, '(')
		if open < 0 {
			out.WriteString(s)
			return out.String()
		}
		end, depth := -1, 0
		for i := open; i < len(s); i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				end = i
				break
			}
		}
		if end < 0 {
			out.WriteString(s)
			return out.String()
		}
		if end-open+1 > longAside {
			out.WriteString(strings.TrimRight(s[:open], " "))
		} else {
			out.WriteString(s[:end+1])
		}
		s = s[end+1:]
	}
}

// urlRE matches an http(s) URL with a path: shorten keeps its scheme and host.
var urlRE = regexp.MustCompile(`\b(https?://[^/\s"]+)/[^\s"]*[^\s".,;)]`)

// nextSteps keeps, of the "; "-separated clauses of a long trailing text,
// the first (often "(gave up after 4 attempts)") and those naming what next.
func nextSteps(suf string) string {
	if len(suf) <= 60 {
		return suf
	}
	parts := strings.Split(suf, "; ")
	kept := parts[:1]
	for _, p := range parts[1:] {
		if strings.Contains(p, "next ") || strings.Contains(p, "rerun") {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "; ")
}

// cutMiddle shortens s to at most n bytes by cutting out its middle at
// word boundaries: what failed and the cause and next step stay.
func cutMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = " ... "
	head, tail := (n-len(mark))*2/5, (n-len(mark))*3/5
	h := s[:runeStart(s, head)]
	if i := strings.LastIndexByte(h, ' '); i > head/2 {
		h = h[:i]
	}
	t := s[runeStart(s, len(s)-tail):]
	if i := strings.IndexByte(t, ' '); i >= 0 && i < tail/2 {
		t = t[i+1:]
	}
	// An aside goes whole or stays whole: no parenthesis left unmatched.
	for strings.Count(h, "(") > strings.Count(h, ")") {
		h = strings.TrimRight(h[:strings.LastIndexByte(h, '(')], " ")
	}
	for strings.Count(t, ")") > strings.Count(t, "(") {
		t = strings.TrimLeft(t[strings.IndexByte(t, ')')+1:], " ")
	}
	return h + mark + t
}

// runeStart backs i off to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
