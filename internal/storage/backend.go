package storage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
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

// IsPermanent reports whether err is a failure that no repetition can
// cure, whatever else it wraps: ErrNotExist, ErrNotObject,
// ErrPrecondition and ErrInvalidPath; os.ErrClosed (a closed store);
// fs.ErrPermission and fs.ErrExist; errors.ErrUnsupported;
// context.Canceled; TLS and certificate failures (a TLS alert from the
// server included); a DNS name that does not exist. An adapter's
// Store.IsTransient checks it first, so that these win in an error that
// also wraps a network failure.
func IsPermanent(err error) bool {
	for _, target := range permanentErrors {
		if errors.Is(err, target) {
			return true
		}
	}
	var (
		authority x509.UnknownAuthorityError
		invalid   x509.CertificateInvalidError
		hostname  x509.HostnameError
		verify    *tls.CertificateVerificationError
		header    tls.RecordHeaderError
		alert     tls.AlertError
		dns       *net.DNSError
		op        *net.OpError
	)
	switch {
	case errors.As(err, &authority), errors.As(err, &invalid), errors.As(err, &hostname),
		errors.As(err, &verify), errors.As(err, &header), errors.As(err, &alert):
		return true
	case errors.As(err, &dns) && dns.IsNotFound:
		return true
	case errors.As(err, &op) && op.Op == "remote error":
		return true // crypto/tls: the server sent a TLS alert
	}
	return false
}

// IsTransient is the part of Store.IsTransient that every adapter shares:
// it reports whether err, not IsPermanent, is a network-level failure that
// sending the same request again may cure: a connection that broke or could
// not be made (transientErrors, any *net.OpError), a timeout (including
// context.DeadlineExceeded of an internal deadline such as a dial timeout),
// a DNS lookup that timed out or failed temporarily. When unsure, do not
// retry. An adapter checks its protocol's statuses before falling back to this.
func IsTransient(err error) bool {
	if err == nil || IsPermanent(err) {
		return false
	}
	for _, target := range transientErrors {
		if errors.Is(err, target) {
			return true
		}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTimeout || dns.IsTemporary
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true // a socket operation failed (TLS refusals are permanent, above)
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// permanentErrors are never transient, whatever else an error wraps.
var permanentErrors = []error{
	ErrNotObject, ErrNotExist, ErrPrecondition, ErrInvalidPath,
	os.ErrClosed, fs.ErrPermission, fs.ErrExist, errors.ErrUnsupported, context.Canceled,
}

// transientErrors mean that the connection broke, could not be made or timed out.
var transientErrors = []error{
	io.EOF, io.ErrUnexpectedEOF, net.ErrClosed, os.ErrDeadlineExceeded, context.DeadlineExceeded,
	syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT,
	syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN, syscall.ENETRESET,
}

// A backend states its block once, as a block struct: a field per member
// in the documented order, tagged block:"NAME[,required][,file][,url]"
// (file: a local file's path; url: an http(s) URL without credentials,
// query or fragment) and as needed why:"a required member's purpose",
// default:"22", min:"1" and max:"65535" (an int's range, a string's least
// length), pattern:"^...$", invalid:"what a value out of range or pattern
// is not" (without it, the schema's only: the backend checks the value),
// creds:"where a url's credentials come from", query:"where its query
// goes". The Go type (string, bool, int, time.Duration) says how a member
// is read. Backend.Fields and Decode derive from it. schema.json stays a
// file for its descriptions and key order (`config schema` prints its
// bytes); tests check the rest against the struct, -update rewrites it.

// BlockFields returns the member names of block struct v, in field order.
func BlockFields(v any) (names []string) {
	for f := range reflect.TypeOf(v).Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("block"), ","); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// DecodeBlock reads b into the block struct dst points to, through b's
// methods, which report each problem. check, if not nil, gets each member
// whose value passed its tags, to check or rewrite it; false zeroes the
// field, refused with its invalid tag's message or as check reported. A
// pattern compiles only when a block has its member, not at every start.
func DecodeBlock(b Block, dst any, check func(b Block, name string) bool) {
	for f, v := range reflect.ValueOf(dst).Elem().Fields() {
		name, flags, _ := strings.Cut(f.Tag.Get("block"), ",")
		if name == "" || !readMember(b, f, v, name, ","+flags+",") {
			continue
		}
		invalid := f.Tag.Get("invalid")
		if v.Kind() == reflect.String && invalid != "" && !regexp.MustCompile(f.Tag.Get("pattern")).MatchString(v.String()) ||
			check != nil && !check(b, name) {
			if invalid != "" {
				b.Errorf(name, "%q is not a valid %s", v.String(), invalid)
			}
			v.SetZero()
		}
	}
}

// readMember reads member name into field f's value v (flags: its block
// tag's, within commas); it reports whether it set a value.
func readMember(b Block, f reflect.StructField, v reflect.Value, name, flags string) bool {
	switch {
	case f.Type == reflect.TypeFor[time.Duration]():
		v.SetInt(int64(b.Duration(name)))
		return v.Int() != 0
	case v.Kind() == reflect.Bool:
		v.SetBool(b.Bool(name, f.Tag.Get("default") == "true"))
		return true
	case v.Kind() == reflect.Int:
		lo, _ := strconv.ParseInt(f.Tag.Get("min"), 10, 64)
		hi, err := strconv.ParseInt(f.Tag.Get("max"), 10, 64)
		n, ok := b.Int(name)
		if ok && err == nil && (n < lo || n > hi) {
			b.Errorf(name, "%d is not %s (%d to %d)", n, f.Tag.Get("invalid"), lo, hi)
			ok = false
		}
		if !ok {
			n, _ = strconv.ParseInt(f.Tag.Get("default"), 10, 64)
		}
		v.SetInt(n)
		return ok
	}
	required := strings.Contains(flags, ",required,")
	if why := f.Tag.Get("why"); why != "" && !b.Has(name) {
		b.Require(name, why)
		return false
	}
	s, ok := b.String(name, required)
	switch {
	case !ok || s == "" && !required:
		return false
	case strings.Contains(flags, ",file,"):
		s = b.LocalPath(name, s)
		ok = s != ""
	case strings.Contains(flags, ",url,"):
		u, isURL := b.URL(name, s)
		ok = isURL && u.User == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == ""
		if isURL && u.User != nil {
			b.Errorf(name, "%q must not contain credentials (they come from %s)", s, f.Tag.Get("creds"))
		} else if isURL && !ok {
			b.Errorf(name, "%q must not have a query or fragment%s", s, strings.TrimSuffix(" ("+f.Tag.Get("query")+")", " ()"))
		}
	}
	if ok {
		v.SetString(s)
	}
	return ok
}
