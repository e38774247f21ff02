package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/cleanpath"
)

// isSlug reports whether s matches [a-z0-9][a-z0-9._-]{0,63}. Not a
// regexp: Validate runs it for every record of large catalogs.
func isSlug(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// field names outputs[i] in messages, formatted only when a message is.
type field int

func (f field) String() string { return fmt.Sprintf("outputs[%d]", int(f)) }

// Validate checks every schema-4 contract rule, returning every problem, each naming its field.
func Validate(c *Catalog) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.SchemaVersion != SchemaVersion {
		add("schema_version: %d is not %d", c.SchemaVersion, SchemaVersion)
	}
	if c.CreatedAt.IsZero() {
		add("created_at: missing")
	}
	if c.UpdatedAt.IsZero() {
		add("updated_at: missing")
	}
	seen := make(map[string]int, len(c.Outputs))
	for i := range c.Outputs {
		if j, dup := seen[c.Outputs[i].Path]; dup {
			add("%s.path: %q duplicates outputs[%d]", field(i), c.Outputs[i].Path, j)
		} else {
			seen[c.Outputs[i].Path] = i
		}
		validateOutput(&c.Outputs[i], field(i), add, nil)
	}
	return errors.Join(errs...)
}

// ownerMemo is the owner and source of the last record a reader found
// valid: the records of one publication share them, checked once.
type ownerMemo struct {
	pipeline, destination string
	source                Source
}

// validateOutput checks one record's rules but uniqueness, naming f in
// every problem it adds; a field, not an interface, so that a valid record
// costs no allocation for its name. m (nil: none) skips the owner and
// source checks of a record with the same as the last one found valid.
func validateOutput(o *Output, f field, add func(string, ...any), m *ownerMemo) {
	if err := cleanpath.CheckUnreserved(o.Path); err != nil {
		add("%s.path: %w", f, err)
	}
	if owner := (ownerMemo{o.PipelineID, o.DestinationID, o.Source}); m == nil || *m != owner {
		ok := true
		fail := func(format string, args ...any) { ok = false; add(format, args...) }
		if !isSlug(o.PipelineID) {
			fail("%s.pipeline_id: %q is not a slug ([a-z0-9][a-z0-9._-]{0,63})", f, o.PipelineID)
		}
		if !isSlug(o.DestinationID) {
			fail("%s.destination_id: %q is not a slug ([a-z0-9][a-z0-9._-]{0,63})", f, o.DestinationID)
		}
		if bundle.ValidateID(o.Source.ID) != nil {
			fail("%s.source.id: %q is not a source id", f, o.Source.ID)
		}
		if bundle.CheckSHA256(o.Source.Digest) != nil {
			fail("%s.source.digest: %q is not sha256:<64 lowercase hex>", f, o.Source.Digest)
		}
		if o.Source.Created.IsZero() {
			fail("%s.source.created: missing", f)
		}
		if ok && m != nil {
			*m = owner
		}
	}
	switch o.Kind {
	case KindSource:
		if o.SourcePath != "" || o.Transform != "" {
			add("%s: kind %q must not have source_path or transform", f, o.Kind)
		}
	case KindGenerated:
		switch o.Transform {
		case TransformMarkdown:
			if err := cleanpath.CheckUnreserved(o.SourcePath); err != nil {
				add("%s.source_path: %w", f, err)
			}
		case TransformIndex, TransformFeed:
			if o.SourcePath != "" {
				add("%s.source_path: transform %q is generated from the catalog and has no source_path", f, o.Transform)
			}
		case TransformGzip, TransformBrotli, TransformZstd:
			if err := cleanpath.CheckUnreserved(o.SourcePath); o.SourcePath != "" && err != nil {
				add("%s.source_path: %w", f, err)
			}
		default:
			add("%s.transform: %q is not %q, %q, %q, %q, %q or %q", f, o.Transform, TransformMarkdown, TransformIndex, TransformFeed,
				TransformGzip, TransformBrotli, TransformZstd)
		}
	default:
		add("%s.kind: %q is not %q or %q", f, o.Kind, KindSource, KindGenerated)
	}
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("%s.url: %q is not an absolute http(s) URL", f, o.URL)
		}
	}
	if bundle.CheckSHA256(o.SHA256) != nil {
		add("%s.sha256: %q is not sha256:<64 lowercase hex>", f, o.SHA256)
	}
	if o.Size < 0 {
		add("%s.size: %d is negative", f, o.Size)
	}
	if o.CreatedAt.IsZero() {
		add("%s.created_at: missing", f)
	}
	if o.UpdatedAt.IsZero() {
		add("%s.updated_at: missing", f)
	}
}

// InvalidChoices tells an operator, one "- " line per choice, what to do about
// an invalid catalog at owner's root: restore it, fix it by hand, or --force,
// which deletes every file no catalog records (unmanaged: those seen, or nil).
func InvalidChoices(o Owner, unmanaged []string) string {
	sel := fmt.Sprintf("--pipeline %s --destination %s", o.PipelineID, o.DestinationID)
	force := "every file no catalog records (a robots.txt, say)"
	if n := len(unmanaged); n > 0 {
		shown := unmanaged[:min(n, 3)]
		force = fmt.Sprintf("the %d file(s) here that no catalog records: %s", n, strings.Join(shown, ", "))
		if n > len(shown) {
			force += ", ..."
		}
	}
	return "what to do, one of:\n" +
		"- restore " + FileName + " from a backup, then run `distributor reconcile-state " + sel + "` to drop the records of files deleted since (reconcile-state refuses the invalid one)\n" +
		"- or repair the value named above by hand\n" +
		"- or replace the root: `distributor run " + sel + " --force --dry-run` lists what --force deletes, which includes " + force +
		"; move those aside, then run it without --dry-run"
}
