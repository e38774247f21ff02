package storage

import (
	"context"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// Backend describes one storage family (local disk, SFTP, an object store) to
// the configuration and the commands; storage/registry lists them. Nothing
// else switches on a backend's name: what differs is data here or Properties.
type Backend struct {
	// Name is the value of a destination's `backend` field, and the name
	// of its configuration block when Fields is not empty.
	Name    string
	Title   string // the backend in prose ("local disk", "SFTP", "S3")
	Summary string // where a root lives, for the schema ("an SFTP server")
	// Fields are the members of the backend's block in their order, its
	// block struct's (BlockFields); none: a destination has no block.
	Fields []string
	// Needs names what the block must contain, for the message when a
	// destination with this backend has none ("host, user and
	// known_hosts_file").
	Needs string
	Path  PathKind // how a destination's `path` is read
	Jobs  int      // transfers at once per destination, unless --jobs
	// Remote: the stores reach a server over a network, where a request
	// can fail for a moment and succeed when repeated, so the commands
	// wrap them in the retry wrapper. Local disk is not remote: its
	// failures do not pass.
	Remote bool
	// Properties are what every Store this backend opens can do, known
	// before one is opened (the configuration checks `headers` against
	// Metadata). An opened Store's Properties may say less, never more.
	Properties Properties
	// Schema is the JSON Schema (draft 2020-12) of the block, as a JSON
	// object, "" when Fields is empty. The configuration's schema embeds
	// it (as $defs.<Name>) and requires it exactly with the backend; its
	// properties are exactly Fields, each with a description.
	Schema string
	// Decode reads the block (b) into the backend's settings (DecodeBlock
	// of its block struct, and what no tag says), which Open and Location
	// receive back unchanged. It reports every problem through b and
	// returns what it could decode; the configuration is refused when b
	// has any problem. Nil without Fields: the settings are nil.
	Decode func(b Block) any
	// Open opens the store of a destination: settings from Decode, root
	// the destination's resolved path (see PathKind), env the process
	// environment as the backend may read it (credentials, agent
	// sockets). It must not write. A backend may connect here (SFTP does,
	// so that an unknown host key fails before anything is planned) or
	// defer its first request to the store's first use.
	Open func(ctx context.Context, settings any, root string, env func(string) string) (Store, error)
	// Warnings, when set, names what the settings from Decode make unsafe
	// but the configuration allows (FTP without TLS): run says each on
	// every run, validate lists them. Nil: none.
	Warnings func(settings any) []string
	// Location names where a root lives for the checks that find two
	// destinations on one root (the same server, nested or equal paths):
	// roots with the same Location and paths of which one is a prefix of
	// the other overlap. Nil for local disk, whose roots all live on this
	// machine (Location "").
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

// Block is a backend's configuration block as Backend.Decode (and
// DecodeBlock) sees it. Each read reports its own problems (with file, line
// and field) and returns ok false for them; Errorf reports a problem the
// backend finds in a value. A member set to null counts as absent.
type Block interface {
	// String reads a member as a string (any YAML scalar, as written);
	// required reports its absence.
	String(name string, required bool) (s string, ok bool)
	// Bool reads a boolean member, def when absent.
	Bool(name string, def bool) bool
	// Int reads an integer member; ok is false when absent or invalid.
	Int(name string) (n int64, ok bool)
	// Duration reads a positive duration such as "15s" or "2m" (units d,
	// h, m, s); 0 when absent (the backend's default) or invalid.
	Duration(name string) time.Duration
	// LocalPath resolves s, member name's value, as a local destination
	// path is ("~/", relative to the configuration file), refusing
	// placeholders; "" when invalid. Validation checks that it can be read.
	LocalPath(name, s string) string
	// URL parses s, member name's value, as an absolute http(s) URL with
	// a host; ok is false (and the problem reported) when it is not one.
	URL(name, s string) (u *url.URL, ok bool)
	// Has reports whether the block sets member name.
	Has(name string) bool
	// Require reports that the required member name is missing; why, if
	// not "", says what it is for.
	Require(name, why string)
	// Errorf reports a problem with the member name, at its line.
	Errorf(name, format string, args ...any)
}

// CheckServer is the check (see DecodeBlock) of a server block's host and
// user members beyond their patterns: no Unicode space or control character
// in either, a host without user, port or path (block, "sftp", names the
// block in the messages). A valid host comes out of an IPv6 address's brackets.
func CheckServer(b Block, name, block string, host *string, user string) bool {
	bad := func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }
	h := *host
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	switch {
	case name == "user" && (user == "" || strings.IndexFunc(user, bad) >= 0):
		b.Errorf("user", "%q is not a user name", user)
	case name != "host":
		return true
	case h == "":
		b.Errorf("host", "must not be empty")
	case strings.IndexFunc(h, bad) >= 0:
		b.Errorf("host", "%q must not contain spaces or control characters", *host)
	case strings.Contains(h, "/"):
		b.Errorf("host", "%q must be a host name or IP address, not a URL or path", *host)
	case strings.Contains(h, "@"):
		b.Errorf("host", "%q must be a host name or IP address; put the user name in %s.user", *host, block)
	case strings.Contains(h, ":") && net.ParseIP(h) == nil:
		b.Errorf("host", "%q must be a host name or IP address; put the port in %s.port", *host, block)
	default:
		*host = h
		return true
	}
	return false
}
