package storage

import (
	"context"
	"time"
)

// Backend describes one storage family (local disk, SFTP, S3, ...) to the
// configuration and the commands. Each backend package exports one; the
// registry (package storage/registry) lists them, and nothing outside the
// storage packages and that registry switches on a backend's name: what
// differs between backends is data here or a Store's Properties.
type Backend struct {
	// Name is the value of a destination's `backend` field, and the name
	// of its configuration block when Fields is not empty.
	Name string
	// Summary says in a few words what the backend writes to, for help
	// and messages ("a directory on this machine").
	Summary string
	// Fields are the members of the backend's configuration block, in
	// the order the documentation lists them. A backend without a block
	// (local disk) has none; then a destination must not have one.
	Fields []string
	// Needs names what the block must contain, for the message when a
	// destination with this backend has none ("host, user and
	// known_hosts_file").
	Needs string
	// Path says how a destination's `path` is read on this backend.
	Path PathKind
	// Properties are what every Store this backend opens can do, known
	// before one is opened (the configuration checks `headers` against
	// Metadata). An opened Store's Properties may say less, never more.
	Properties Properties
	// Schema is the JSON Schema (draft 2020-12) of the block, as a JSON
	// object, "" when Fields is empty. The configuration's schema embeds
	// it and requires it exactly with the backend.
	Schema string
	// Decode reads the block (b) into the backend's settings, which Open
	// and Root receive back unchanged. It reports every problem through
	// b and returns what it could decode; the configuration is refused
	// when b has any problem. It is called with a nil-free b even for a
	// backend without Fields (b then holds no members).
	Decode func(b Block) any
	// Open opens the store of a destination: settings from Decode, root
	// the destination's resolved path (see PathKind), env the process
	// environment as the backend may read it (credentials, agent
	// sockets). It must not write. A backend may connect here (SFTP does,
	// so that an unknown host key fails before anything is planned) or
	// defer its first request to the store's first use.
	Open func(ctx context.Context, settings any, root string, env func(string) string) (Store, error)
	// Location names where a root lives for the overlap check between
	// destinations (two roots on the same server, nested or equal):
	// roots with the same Location and paths of which one is a prefix of
	// the other overlap. Local disk returns "".
	Location func(settings any) string
}

// PathKind says how a destination's `path` is read.
type PathKind int

const (
	// PathLocal is a file path on this machine: required; "~/" and
	// relative paths are resolved against the configuration file.
	PathLocal PathKind = iota
	// PathServer is an absolute path on a server (starting with "/"):
	// required.
	PathServer
	// PathKey is a key prefix in a bucket or container, without leading
	// or trailing "/", possibly "" (the whole bucket): optional.
	PathKey
)

// Block is a backend's configuration block as the configuration decoder
// presents it to Backend.Decode. Each read reports its own problems (a
// wrong type, a missing required member) with the file, line and field,
// and returns ok false for them; Errorf reports a problem the backend
// finds in a value it read. Names are the block's member names.
type Block interface {
	// String reads a string member; required reports its absence.
	String(name string, required bool) (s string, ok bool)
	// Bool reads a boolean member, def when absent.
	Bool(name string, def bool) bool
	// Int reads an integer member; ok is false when absent or invalid.
	Int(name string) (n int64, ok bool)
	// Duration reads a positive duration such as "15s" or "2m"; 0 when
	// absent (the backend's default) or invalid.
	Duration(name string) time.Duration
	// LocalPath reads the path of a file on this machine, resolved as a
	// local destination path is ("~/", relative to the configuration
	// file); "" when absent or invalid. Placeholders are refused.
	LocalPath(name string, required bool) string
	// URL reads an http or https URL without credentials, query or
	// fragment; "" when absent or invalid.
	URL(name string) string
	// Has reports whether the block sets the member.
	Has(name string) bool
	// Errorf reports a problem with the member name (at its line).
	Errorf(name, format string, args ...any)
}
