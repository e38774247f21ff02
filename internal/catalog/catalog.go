// Package catalog models the destination state file .distributor.json
// (schema 4), the catalog of every managed output at a destination root:
// it parses, classifies, validates and deterministically encodes it, with
// no I/O.
package catalog

import (
	"strings"
	"time"
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
