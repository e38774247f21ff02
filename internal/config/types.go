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

// Notification events.
const (
	EventPublished = "published"
	EventSkipped   = "skipped"
	EventFailed    = "failed"
)

// Config is a decoded and validated distributor.yaml. Relative local paths
// have been resolved against the config file's directory and "~/" expanded.
type Config struct {
	// File is the absolute path of the config file it was loaded from.
	File          string
	Pipelines     []Pipeline
	Destinations  []Destination
	Notifications []Notification
	// MetricsFile is the absolute path of the Prometheus text file a real
	// run writes its metrics to (run --metrics-file overrides it), or "".
	MetricsFile string
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
	ID string
	// Backend names the storage backend (a name in package
	// storage/registry: local, sftp, s3, ...).
	Backend string
	// Path is the destination root and may hold placeholders (see Expand),
	// as the backend's storage.PathKind reads it. PathLocal: an absolute,
	// cleaned file path ("~/" and relative paths are resolved at load).
	// PathServer: an absolute, cleaned server path. PathKey: a key prefix
	// without leading or trailing "/", possibly "" (the bucket root).
	Path     string
	Workflow string // additive | replacement (default additive)
	// MaxDeletes, when set, is the most outputs one plan may delete at this
	// destination: a plan that would delete more aborts before any change.
	MaxDeletes *int
	// SingleWriter lets writers use a root whose server fails the probe of
	// conditional writes (the operator guarantees that no two writers run
	// on it at once); every run warns.
	SingleWriter bool
	Publish      Publish
	Paths        Paths
	Markdown     Markdown
	Links        Links
	// Headers are the response-metadata rules, first match wins (only
	// with a backend whose stores keep metadata: Properties.Metadata).
	Headers []HeaderRule
	// Index is the archive index (and feed) of this destination's
	// reports, or nil.
	Index *Index
	// Retention is nil when the destination has no retention block.
	Retention *Retention
	// Settings is what the backend's Decode returned for the block named
	// like the backend (nil for a backend without one), which its Open
	// and Location read (a pointer to the adapter's Options, typically).
	Settings any
	// LocalFiles are the files on this machine the backend's block names
	// (an SSH identity, a known_hosts file), which validate checks.
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
	// Include and Exclude are glob patterns (see package glob) on bundle
	// paths, applied before paths.rename and paths.prefix: a bundle file
	// is published when it matches an Include pattern (nil: every file)
	// and no Exclude pattern.
	Include []string
	Exclude []string
}

// HeaderRule sets the response metadata of the S3 objects whose output
// path (destination-relative, prefix included) matches Match. Empty fields
// leave the default (Content-Type from the extension, no Cache-Control,
// no Content-Disposition).
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
	// Path is the index page's root-relative output path (paths.prefix
	// does not apply).
	Path string
	// Title heads the page and the feed (default: the destination id).
	Title string
	// Feed is the Atom feed's root-relative output path, or "" for none.
	Feed string
	// FeedEntries is how many of the newest reports the feed holds.
	FeedEntries int
	Line        int
}

// Paths maps source paths to output paths.
type Paths struct {
	// Prefix is prepended verbatim, as a plain string, to every output path
	// and may hold placeholders. It is not a directory name: "tomorrow/"
	// gives "tomorrow/index.html", while "report-" gives "report-index.html"
	// and "tomorrow" (no slash) gives "tomorrowindex.html". "" means no
	// prefix. Load checks that prefix+name stays a clean path; planning must
	// still check the final output paths (a prefix ".dist" plus a file
	// "ributor.json" would hit the reserved namespace).
	Prefix string
	Rename map[string]string // exact source path -> output path, before .md -> .html
	// RenameLines is the config file line of each Rename key, for
	// messages about it.
	RenameLines map[string]int
}

// Markdown configures markdown_to_html.
type Markdown struct {
	Template string // absolute path of an html/template file, or "" for the built-in page
	RawHTML  bool
}

// Links configures output URLs.
type Links struct {
	BaseURL string // "" when outputs get no URL; otherwise ends with "/"
	Pretty  bool
}

// Retention is the destination's retention policy.
type Retention struct {
	Prune *Prune
}

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
