package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/distributor-dev/distributor/internal/cleanpath"
	"go.yaml.in/yaml/v3"
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
	var ce *cleanpath.Error
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}
