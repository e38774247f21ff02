// Package catalog models the destination state file .distributor.json
// (schema 4), the catalog of every managed output at a destination root:
// it parses, classifies, validates and deterministically encodes it, with
// no I/O.
package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/cleanpath"
)

// FileName is the catalog's name at a destination root.
const FileName = ".distributor.json"

// SchemaVersion is the schema this package reads and writes.
const SchemaVersion = 4

// ModeCatalog is the only valid state.mode.
const ModeCatalog = "catalog"

// Output kinds and transforms.
const (
	KindSource        = "source"
	KindGenerated     = "generated"
	TransformMarkdown = "markdown_to_html"
	// TransformIndex and TransformFeed are a destination's archive index
	// page and Atom feed, generated from the catalog: no source_path.
	TransformIndex = "index"
	TransformFeed  = "feed"
	// TransformGzip, TransformBrotli and TransformZstd are precompressed
	// sidecars (spec 3.4): P.gz, P.br, P.zst beside an output P; their
	// source_path is P's, none for an index or feed.
	TransformGzip   = "gzip"
	TransformBrotli = "brotli"
	TransformZstd   = "zstd"
)

// SidecarSuffix is the suffix a compression transform's sidecar adds to
// its output's path (".br", ".gz", ".zst"); "" for any other transform.
func SidecarSuffix(transform string) string {
	switch transform {
	case TransformBrotli:
		return ".br"
	case TransformGzip:
		return ".gz"
	case TransformZstd:
		return ".zst"
	}
	return ""
}

// SidecarOf returns the path of the output whose sidecar a record at path
// with transform is ("a.html" for "a.html.gz", gzip); ok false for a record
// that is no sidecar.
func SidecarOf(path, transform string) (plain string, ok bool) {
	suffix := SidecarSuffix(transform)
	if suffix == "" || !strings.HasSuffix(path, suffix) || len(path) == len(suffix) {
		return "", false
	}
	return strings.TrimSuffix(path, suffix), true
}

// Catalog is a schema-4 destination state document.
type Catalog struct {
	SchemaVersion      int
	DistributorVersion string // optional
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Outputs            []Output // sorted by Path when encoded
}

// Output is one managed output record.
type Output struct {
	Path          string
	PipelineID    string
	DestinationID string
	Source        Source
	Kind          string // KindSource or KindGenerated
	SourcePath    string // generated only
	Transform     string // generated only
	URL           string // optional
	SHA256        string
	Size          int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Source is the compact identity of the source bundle an output came from.
type Source struct {
	ID      string
	Digest  string
	Created time.Time
}

// Owner identifies who manages an output: a pipeline/destination pair.
type Owner struct {
	PipelineID    string
	DestinationID string
}

// Owner returns the output's owner.
func (o *Output) Owner() Owner {
	return Owner{PipelineID: o.PipelineID, DestinationID: o.DestinationID}
}

// Status classifies what was found at a destination root.
type Status string

// The states a root can be in (spec section 4).
const (
	StatusNone    Status = "none"    // no catalog file
	StatusCatalog Status = "catalog" // a valid schema-4 catalog
	StatusLegacy  Status = "legacy"  // schema 1, 2 or 3: superseded, never migrated
	StatusInvalid Status = "invalid" // unreadable, or a v4 document that fails validation
	StatusFuture  Status = "future"  // schema newer than 4
)

// State is the result of reading a root's catalog file.
type State struct {
	Status        Status
	Catalog       *Catalog // set for StatusCatalog
	SchemaVersion int      // the document's schema_version, if an integer
	Problem       error    // explains StatusInvalid (and StatusFuture/StatusLegacy briefly)
}

// Index returns the outputs keyed by path.
func (c *Catalog) Index() map[string]*Output {
	m := make(map[string]*Output, len(c.Outputs))
	for i := range c.Outputs {
		m[c.Outputs[i].Path] = &c.Outputs[i]
	}
	return m
}

// Clone returns a deep copy of c.
func (c *Catalog) Clone() *Catalog {
	if c == nil {
		return nil
	}
	n := *c
	n.Outputs = append([]Output(nil), c.Outputs...)
	return &n
}

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
