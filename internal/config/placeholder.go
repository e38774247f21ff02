package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Placeholder names, usable as "{name}" in path and paths.prefix.
const (
	PlaceholderPipelineID    = "pipeline_id"
	PlaceholderDestinationID = "destination_id"
	PlaceholderSourceID      = "source_id"
	PlaceholderSourceDate    = "source_date"    // manifest created, UTC, as 2006-01-02
	PlaceholderSourceCreated = "source_created" // manifest created, UTC, as 20060102T150405Z
)

// Layouts of the time placeholders.
const (
	SourceDateLayout    = "2006-01-02"
	SourceCreatedLayout = "20060102T150405Z"
)

var (
	sourcePlaceholders = []string{PlaceholderSourceID, PlaceholderSourceDate, PlaceholderSourceCreated}
	placeholderNames   = append([]string{PlaceholderPipelineID, PlaceholderDestinationID}, sourcePlaceholders...)
)

// Vars holds the values substituted for placeholders by Expand.
type Vars struct {
	PipelineID    string
	DestinationID string
	// SourceID and SourceCreated come from the bundle's manifest (zero without one).
	SourceID      string
	SourceCreated time.Time
}

// templatePart is a literal run of text or, when name is set, a placeholder.
type templatePart struct {
	lit  string
	name string
}

// parseTemplate splits s into literals and known placeholders (braces have no escape).
func parseTemplate(s string) ([]templatePart, error) {
	var parts []templatePart
	for len(s) > 0 {
		open := strings.IndexByte(s, '{')
		close := strings.IndexByte(s, '}')
		if close >= 0 && (open < 0 || close < open) {
			return nil, fmt.Errorf(`unmatched "}" (placeholders are written {name}; known: %s)`, knownPlaceholders())
		}
		if open < 0 {
			parts = append(parts, templatePart{lit: s})
			break
		}
		if open > 0 {
			parts = append(parts, templatePart{lit: s[:open]})
		}
		if close < 0 {
			return nil, fmt.Errorf(`unclosed "{" (placeholders are written {name}; known: %s)`, knownPlaceholders())
		}
		name := s[open+1 : close]
		if !slices.Contains(placeholderNames, name) {
			return nil, fmt.Errorf("unknown placeholder %q (known: %s)", s[open:close+1], knownPlaceholders())
		}
		parts = append(parts, templatePart{name: name})
		s = s[close+1:]
	}
	return parts, nil
}

func knownPlaceholders() string { return "{" + strings.Join(placeholderNames, "}, {") + "}" }

// Expand substitutes the placeholders of s (a path or paths.prefix) from v.
// It fails on malformed or unknown placeholders, an empty needed value, and a
// value that is not one safe path segment: a path never moves up or sideways.
func Expand(s string, v Vars) (string, error) {
	parts, err := parseTemplate(s)
	if err != nil {
		return "", fmt.Errorf("expanding %q: %w", s, err)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.name == "" {
			b.WriteString(p.lit)
			continue
		}
		var val, need string
		switch p.name {
		case PlaceholderPipelineID:
			val, need = v.PipelineID, "a pipeline id"
		case PlaceholderDestinationID:
			val, need = v.DestinationID, "a destination id"
		case PlaceholderSourceID:
			val, need = v.SourceID, "a source bundle (its manifest id)"
		case PlaceholderSourceDate, PlaceholderSourceCreated:
			layout := SourceDateLayout
			if p.name == PlaceholderSourceCreated {
				layout = SourceCreatedLayout
			}
			need = "a source bundle (its manifest created time)"
			if !v.SourceCreated.IsZero() {
				val = v.SourceCreated.UTC().Format(layout)
			}
		}
		if val == "" {
			return "", fmt.Errorf("expanding %q: placeholder {%s} needs %s", s, p.name, need)
		}
		if val == "." || val == ".." || strings.ContainsAny(val, "/\\\x00") {
			return "", fmt.Errorf("expanding %q: value %q for {%s} is not a single path segment", s, val, p.name)
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

// NeedsSource reports whether s uses a {source_*} placeholder (from the bundle's manifest).
func NeedsSource(s string) bool { return usedPlaceholder(s, sourcePlaceholders) != "" }

// usedPlaceholder returns the first of names that s uses as "{name}", or "".
func usedPlaceholder(s string, names []string) string {
	for _, n := range names {
		if strings.Contains(s, "{"+n+"}") {
			return n
		}
	}
	return ""
}

// FixedPath reports whether the destination's path has no placeholder.
func (d *Destination) FixedPath() bool { return usedPlaceholder(d.Path, placeholderNames) == "" }
