package config

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/distributor-dev/distributor/internal/cleanpath"
)

// id decodes o's required id: a slug unique among its kind's ids (seen holds their lines).
func (d *decoder) id(o *object, seen map[string]int, kind string) string {
	s, n, ok := d.str(o, "id", true)
	if !ok {
		return ""
	}
	field := join(o.path, "id")
	if !slugRE.MatchString(s) {
		d.add(n.Line, field, "%q is not a valid id: use 1 to 64 characters of a-z, 0-9, \".\", \"_\" and \"-\", starting with a letter or digit", s)
	}
	if first, dup := seen[s]; dup && s != "" {
		d.add(n.Line, field, "duplicate %s id %q (first defined at line %d)", kind, s, first)
	} else if s != "" {
		seen[s] = n.Line
	}
	return s
}

// oneOf checks s against allowed values, suggesting the closest.
func (d *decoder) oneOf(s string, n *yaml.Node, field string, allowed []string) bool {
	if slices.Contains(allowed, s) {
		return true
	}
	msg := fmt.Sprintf("%q is not one of %s", s, strings.Join(allowed, ", "))
	if c := Closest(s, allowed); c != "" {
		msg += fmt.Sprintf("; did you mean %q?", c)
	}
	d.add(n.Line, field, "%s", msg)
	return false
}

// enum decodes optional field name, one of allowed, else def.
func (d *decoder) enum(o *object, name string, allowed []string, def string) string {
	if s, v, ok := d.str(o, name, false); ok && d.oneOf(s, v, join(o.path, name), allowed) {
		return s
	}
	return def
}

func (d *decoder) noPlaceholder(s string, n *yaml.Node, field string) bool {
	if name := usedPlaceholder(s, placeholderNames); name != "" {
		d.add(n.Line, field, "placeholder {%s} is not allowed here: placeholders are only allowed in path and paths.prefix", name)
		return false
	}
	return true
}

func (d *decoder) template(s string, n *yaml.Node, field string) bool {
	if _, err := parseTemplate(s); err != nil {
		d.add(n.Line, field, "%v", err)
		return false
	}
	return true
}

// localPath resolves a local file path: "~/" is the home directory, and a
// relative path joins the config file's directory.
func (d *decoder) localPath(s string, n *yaml.Node, field string) (string, bool) {
	switch {
	case s == "":
		d.add(n.Line, field, "must not be empty")
		return "", false
	case strings.IndexByte(s, 0) >= 0:
		d.add(n.Line, field, "must not contain a NUL byte")
		return "", false
	case s == "~" || strings.HasPrefix(s, "~/"):
		home, err := d.homeDir()
		if err != nil {
			d.add(n.Line, field, "cannot expand ~: %v", err)
			return "", false
		}
		s = filepath.Join(home, s[1:])
	case strings.HasPrefix(s, "~"):
		d.add(n.Line, field, "%q: only ~/ (the home directory of the user running distributor) is expanded, not ~user", s)
		return "", false
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(d.dir, s)
	}
	return filepath.Clean(s), true
}

// httpURL checks s is an absolute http(s) URL with a host.
func httpURL(s string) (*url.URL, error) {
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return nil, fmt.Errorf("%q must not contain spaces or control characters", s)
	}
	u, err := url.Parse(s)
	switch {
	case !strings.Contains(s, "://") || err == nil && (u.Scheme != "http" && u.Scheme != "https" || u.Opaque != ""):
		return nil, fmt.Errorf("%q must be an absolute http:// or https:// URL", s)
	case err != nil:
		return nil, fmt.Errorf("%q is not a valid URL", s)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("%q has no host", s)
	}
	return u, nil
}

// duration decodes a positive ParseDuration duration; absent is 0.
func (d *decoder) duration(o *object, name string, required bool) time.Duration {
	s, v, ok := d.str(o, name, required)
	if !ok {
		return 0
	}
	dur, err := ParseDuration(s)
	switch {
	case err != nil:
		d.add(v.Line, join(o.path, name), "%v", err)
	case dur <= 0:
		d.add(v.Line, join(o.path, name), "must be greater than zero")
	default:
		return dur
	}
	return 0
}

func reason(err error) string {
	if ce, ok := errors.AsType[*cleanpath.Error](err); ok {
		return ce.Reason
	}
	return err.Error()
}

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
	n := len(s) - 1 // the count of rest characters
	return len(s) > 0 && n >= p.min && (p.max < 0 || n <= p.max) &&
		strings.IndexByte(p.first, s[0]) >= 0 && strings.Trim(s[1:], p.rest) == ""
}

// durationUnits are ParseDuration's units, largest first; unitSizes their sizes.
const durationUnits = "dhms"

var unitSizes = [...]time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second}

// ParseDuration parses a retention duration: pairs of a decimal number and a
// unit d (24h), h, m or s, largest first, each at most once ("30d", "1d12h",
// "90m"); no sign, fraction or space. Zero ("0d") is accepted: callers that
// need a positive duration check that.
func ParseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("invalid duration %q: empty (write e.g. 30d, 1d12h or 90m)", s)
	}
	var total time.Duration
	for rest, next := s, 0; rest != ""; { // next: the index in durationUnits of the largest unit still allowed
		unit := strings.TrimLeft(rest, digits)
		num := rest[:len(rest)-len(unit)]
		if num == "" {
			return 0, fmt.Errorf("invalid duration %q: expected a number at %q (write e.g. 30d, 1d12h or 90m)", s, rest)
		} else if unit == "" {
			return 0, fmt.Errorf("invalid duration %q: missing unit after %s (use s, m, h or d)", s, num)
		}
		idx := strings.IndexByte(durationUnits, unit[0])
		if idx < 0 {
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use s, m, h or d)", s, string(rune(unit[0])))
		} else if idx < next {
			return 0, fmt.Errorf("invalid duration %q: units must go from largest to smallest (d, h, m, s), each at most once", s)
		}
		size := unitSizes[idx]
		n, err := strconv.ParseInt(num, 10, 64) // digits only: fails only out of range
		if err != nil || n > int64(math.MaxInt64/size) || total > math.MaxInt64-time.Duration(n)*size {
			return 0, fmt.Errorf("invalid duration %q: too large", s)
		}
		total += time.Duration(n) * size
		next, rest = idx+1, unit[1:]
	}
	return total, nil
}

// Closest returns the candidate nearest to name by edit distance (with
// transpositions, ignoring case) within a plausible typo, else the only
// candidate that a name of 4 characters or more begins, else "".
func Closest(name string, candidates []string) string {
	best, bestDist, prefixed, prefixes := "", 0, "", 0
	for _, c := range candidates {
		if len(name) >= 4 && len(c) > len(name) && strings.EqualFold(c[:len(name)], name) {
			prefixed, prefixes = c, prefixes+1
		}
		if diff := len(name) - len(c); diff > 2 || diff < -2 {
			continue // the distance is at least the length difference
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d <= min(2, len(c)/2) && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	if best == "" && prefixes == 1 {
		return prefixed
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and adjacent transpositions each cost 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Inputs are field names and ids; guard against pathological lengths.
	if len(ra) > 128 || len(rb) > 128 {
		if a == b {
			return 0
		}
		return max(len(ra), len(rb))
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// EnvConfig names the configuration file when no --config flag is given.
const EnvConfig = "DISTRIBUTOR_CONFIG"

// DefaultFile is the configuration file when neither names one.
const DefaultFile = "distributor.yaml"

// Resolve picks the configuration file: flagPath, else getenv(EnvConfig)
// (getenv may be nil), else DefaultFile, as given so that messages show
// what the user wrote. A blank value is an error: surely a mistake.
func Resolve(flagPath string, getenv func(string) string) (string, error) {
	if flagPath != "" {
		if strings.TrimSpace(flagPath) == "" {
			return "", fmt.Errorf("--config %q: blank path", flagPath)
		}
		return flagPath, nil
	}
	if getenv != nil {
		if v := getenv(EnvConfig); v != "" {
			if strings.TrimSpace(v) == "" {
				return "", fmt.Errorf("%s=%q: blank path", EnvConfig, v)
			}
			return v, nil
		}
	}
	return DefaultFile, nil
}

// Starter is the commented starter configuration `distributor config init`
// writes (starter.yaml): one pipeline publishing ./out to a local directory,
// which `distributor validate` accepts (with a warning until ./out exists).
//
//go:embed starter.yaml
var Starter string

// noEnvFields are the fields whose values are never expanded: ids and the
// references to them, and secret_env, which names a variable itself.
var noEnvFields = map[string]bool{"id": true, "secret_env": true, "destinations[]": true, "on[]": true}

// expandEnv expands ${NAME} in values (not keys, nor noEnvFields) before decoding,
// so "port: ${SFTP_PORT}" decodes as a number; false when there were problems.
func (d *decoder) expandEnv(root *yaml.Node) bool {
	before := len(d.probs)
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, field, key string)
	walk = func(n *yaml.Node, field, key string) {
		for i := 0; n != nil && n.Kind == yaml.AliasNode && i <= 100; i++ {
			n = n.Alias
		}
		if n == nil || seen[n] || d.exhausted {
			return
		}
		seen[n] = true
		d.budget--
		if d.budget < 0 {
			d.exhausted = true
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				walk(n.Content[i+1], join(field, k), k)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, field+"["+strconv.Itoa(i)+"]", key+"[]")
			}
		case yaml.ScalarNode:
			if noEnvFields[key] || !strings.Contains(n.Value, "$") {
				return
			}
			v, err := expandVars(n.Value, d.getenv)
			if err != nil {
				d.add(n.Line, field, "%v", err)
				return
			}
			n.Value = v
			if n.Style&yaml.TaggedStyle == 0 {
				n.Tag = "" // resolve the value's type again: "${PORT}" may be 22
			}
		}
	}
	walk(root, "", "")
	return len(d.probs) == before
}

// expandVars expands ${NAME} in s with getenv; "$$" is a literal "$".
func expandVars(s string, getenv func(string) string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("%q: \"${\" without its \"}\" (write $$ for a literal $)", s)
			}
			name := s[i+2 : i+2+end]
			if !envNameRE.MatchString(name) {
				return "", fmt.Errorf("%q: ${%s} is not a valid environment variable name (write $$ for a literal $)", s, name)
			}
			v := ""
			if getenv != nil {
				v = getenv(name)
			}
			if v == "" {
				return "", fmt.Errorf("${%s} is not set (or empty) in the environment: set it, or write $${%s} for the literal text", name, name)
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
