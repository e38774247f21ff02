package config

import "time"

// Workflow values.
const (
	WorkflowAdditive    = "additive"
	WorkflowReplacement = "replacement"
)

// Publish source selections.
const (
	SourceAll    = "all"
	SourceAssets = "assets"
	SourceNone   = "none"
)

// links.missing values: what a link or image of a rendered page whose
// target the destination does not publish does.
const (
	MissingWarn = "warn" // a warning in validate and run (the default)
	MissingFail = "fail" // validate and run fail for the destination
)

// Notification events.
const (
	EventPublished = "published"
	EventSkipped   = "skipped"
	EventFailed    = "failed"
)

// Config is a decoded and validated distributor.yaml. Relative local paths
// have been resolved against the config file's directory and "~/" expanded.
type Config struct {
	File          string // absolute path of the config file
	Pipelines     []Pipeline
	Destinations  []Destination
	Notifications []Notification
	MetricsFile   string // absolute Prometheus text file a real run writes (run --metrics-file overrides), or ""
}

// Pipeline publishes one source bundle to one or more destinations.
type Pipeline struct {
	ID           string
	Source       string // absolute bundle directory
	Destinations []string
	Line         int // line in the config file, for messages
}

// Destination is one destination root and how outputs are laid out in it.
type Destination struct {
	ID      string
	Backend string // a name in package storage/registry: local, sftp, s3, ...
	// Path is the destination root (placeholders allowed, see Expand): clean and
	// absolute for PathLocal and PathServer, a key prefix without leading or
	// trailing "/" for PathKey ("" is the bucket root).
	Path       string
	Workflow   string // additive | replacement (default additive)
	MaxDeletes *int   // when set, the most outputs one plan may delete here
	// SingleWriter lets writers use a root whose server fails the probe of
	// conditional writes (the operator guarantees one writer); runs warn.
	SingleWriter bool
	Publish      Publish
	Paths        Paths
	Markdown     Markdown
	Links        Links
	Headers      []HeaderRule // response-metadata rules, first match wins (backends with Properties.Metadata)
	Index        *Index       // the archive index and feed, or nil
	Compress     *Compress    // precompressed outputs, or nil for none
	Retention    *Retention   // nil without a retention block
	// Settings is the backend's Decode result (nil without a block), for Open and Location.
	Settings any
	// LocalFiles are local files the backend's block names (an SSH identity), for validate.
	LocalFiles []LocalFile
	Line       int
}

// LocalFile is a file on this machine that a backend's block names.
type LocalFile struct {
	Field string // "sftp.known_hosts_file"
	Path  string // absolute
}

// Publish selects which outputs are produced.
type Publish struct {
	HTML   bool   // render Markdown to HTML; default true
	Source string // all | assets | none; default assets
	// Include and Exclude are globs on bundle paths, before paths: a file is published
	// when it matches an Include pattern (nil: every file) and no Exclude pattern.
	Include []string
	Exclude []string
}

// HeaderRule sets the response metadata of objects whose output path (prefix
// included) matches Match; empty fields keep the default (type from extension).
type HeaderRule struct {
	Match              string
	CacheControl       string
	ContentType        string
	ContentDisposition string
	Line               int
}

// DefaultFeedEntries is index.feed_entries when it is not set.
const DefaultFeedEntries = 20

// Index is a destination's archive index: an HTML page at Path (and an
// Atom feed at Feed) listing the reports published at its root.
type Index struct {
	Path        string // root-relative (paths.prefix does not apply)
	Title       string // heads the page and the feed (default: the destination id)
	Feed        string // the Atom feed's root-relative path, or "" for none
	FeedEntries int    // how many of the newest reports the feed holds
	Line        int
}

// Compress is a destination's precompressed outputs (spec 3.4): on a
// directory store a sidecar per encoding beside each matching output, on an
// object store the object itself stored gzip-compressed.
type Compress struct {
	Encodings []string // br, gzip, zstd; in configuration order, none twice
	Match     []string // globs on output paths (prefix included)
	MinSize   int64    // smaller outputs stay plain
	Line      int
}

// DefaultCompressMatch and DefaultCompressMinSize are compress.match and
// compress.min_size when not set: the text formats of the web, 1 KiB.
var DefaultCompressMatch = []string{"**/*.{html,css,js,mjs,svg,json,xml,txt,csv,md}"}

// DefaultCompressMinSize is compress.min_size when not set.
const DefaultCompressMinSize = 1024

// Paths maps source paths to output paths.
type Paths struct {
	// Prefix is prepended verbatim to every output path, placeholders allowed; Load checks
	// it ends with "/" and keeps prefix+name clean; planning checks reserved names.
	Prefix      string
	Rename      map[string]string // exact source path -> output path, before .md -> .html
	RenameLines map[string]int    // the config line of each Rename key
}

// Markdown configures markdown_to_html.
type Markdown struct {
	Template string // absolute path of an html/template file, or "" for the built-in page
	RawHTML  bool
}

// Links configures output URLs and what broken links in pages do.
type Links struct {
	BaseURL string // "" when outputs get no URL; otherwise ends with "/"
	Pretty  bool
	Missing string // MissingWarn (also "") or MissingFail
}

// Retention is the destination's retention policy.
type Retention struct{ Prune *Prune }

// Prune selects outputs for `distributor prune`.
type Prune struct {
	OlderThan time.Duration
	KeepMin   int
}

// Notification is one webhook notification.
type Notification struct {
	ID        string
	URL       string
	SecretEnv string
	On        []string // published | skipped | failed
	Line      int
}

// Pipeline returns the pipeline with the given id.
func (c *Config) Pipeline(id string) (*Pipeline, bool) {
	for i := range c.Pipelines {
		if c.Pipelines[i].ID == id {
			return &c.Pipelines[i], true
		}
	}
	return nil, false
}

// Destination returns the destination with the given id.
func (c *Config) Destination(id string) (*Destination, bool) {
	for i := range c.Destinations {
		if c.Destinations[i].ID == id {
			return &c.Destinations[i], true
		}
	}
	return nil, false
}
