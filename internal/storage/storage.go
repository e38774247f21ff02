// Package storage is the contract between the engine and the destination
// backends (subpackages, listed in storage/registry): the Store interface,
// its errors, the Backend description and shared helpers.
//
// A Store is rooted: every path is a clean, relative, slash-separated path
// below the destination root. Stores know nothing of catalogs, workflows or
// ownership. This package imports no other internal package.
package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"
)

// ErrNotExist is returned (wrapped) when a path does not exist. It is
// fs.ErrNotExist, so errors.Is(err, fs.ErrNotExist) holds as well.
var ErrNotExist = fs.ErrNotExist

// ErrNotObject is returned (wrapped, together with ErrNotExist) when a path
// exists but is not an object: a directory, a symbolic link or a special
// file. Such a path does not exist as an object, so errors.Is(err,
// ErrNotExist) holds too; callers that must not mistake it for absence (the
// catalog) test ErrNotObject first.
var ErrNotObject = errors.New("storage: not a regular object")

// ErrPrecondition is returned (wrapped) by a conditional Put (PutCreate,
// PutIfVersion) whose condition on the stored object does not hold.
var ErrPrecondition = errors.New("storage: precondition failed")

// ErrInvalidPath is returned (wrapped) for a path that is not clean and relative.
var ErrInvalidPath = errors.New("storage: invalid path")

// Version identifies one stored state of an object written with a
// PutIfVersion Put (or read with Get or ReadVersioned), for compare-and-swap.
// It is opaque: an ETag on S3, a content digest elsewhere. The zero Version
// means "absent".
type Version string

// Info describes one stored object.
type Info struct {
	Path    string // relative to the root, slash-separated
	Size    int64
	ModTime time.Time
	// Version is set where the backend reports it with Stat and List at no
	// extra cost (S3: the ETag), so a caller can tell whether an object
	// changed without reading it; "" where it does not (local disk, SFTP:
	// their Version is a content digest).
	Version Version
	// Dir marks an entry that is not an object (see Store.List): an empty
	// directory, a symbolic link or a special file. Its Path ends in a
	// slash ("a/b/") and it has no Size, ModTime or Version.
	Dir bool
}

// TempPrefix starts the base name of every temporary object a Store creates
// while writing; List never returns them. It is inside the reserved
// ".distributor" namespace, so it cannot collide with a bundle path.
const TempPrefix = ".distributor-tmp-"

// IsTemp reports whether the final segment of p names a temporary object.
func IsTemp(p string) bool {
	base := p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		base = p[i+1:]
	}
	return strings.HasPrefix(base, TempPrefix)
}

// Store is a destination root. Implementations must be safe for concurrent
// use by multiple goroutines.
type Store interface {
	// Put writes exactly size bytes read from r to the object at path,
	// creating parent directories as needed, atomically: a reader of the
	// store sees the old object or the new one, never a partial one. If r
	// returns an error, or yields more or fewer than size bytes, Put fails
	// and the old object (or none) remains. On return without error the
	// data is durable as far as the backend can promise. opts.Mode says
	// what the write may replace:
	//
	//   - PutReplace (the zero PutOptions) creates or replaces the object.
	//   - PutCreate only creates: when any entry exists at path it fails
	//     with an error matching ErrPrecondition and leaves that entry
	//     alone (how each backend enforces it: docs/design.md). Writers use
	//     it for every output that did not exist when they planned, so that
	//     a late write of a writer that lost its lock cannot replace a
	//     successor's file.
	//   - PutIfVersion writes only if the object's current Version is
	//     opts.Version, the zero Version meaning "only if absent" (see
	//     IfVersion), and returns the new Version. When the condition does
	//     not hold it returns an error matching ErrPrecondition and writes
	//     nothing. r must implement io.Seeker and is read from its start
	//     (the store, or a retrying wrapper, may rewind it with
	//     Seek(0, io.SeekStart)). S3 sends it as one PUT (never multipart,
	//     so the server enforces the condition; the limit is 5 GiB). See
	//     PutIf for a small object in memory.
	//
	// The other modes return the zero Version (a content digest would
	// cost hashing every output). opts.Metadata is stored with a
	// PutReplace or PutCreate write by backends that serve response
	// metadata (Properties.Metadata); the others ignore it.
	Put(ctx context.Context, path string, r io.Reader, size int64, opts PutOptions) (Version, error)

	// Get reads a small object whole and returns its current Version; an
	// empty object's data is empty but not nil (catalog.Read takes nil for
	// no file). A missing object yields an error matching ErrNotExist.
	Get(ctx context.Context, path string) ([]byte, Version, error)

	// ReadVersioned streams the object at path to fn and returns the Version
	// Get would return for those bytes; what fn leaves unread is drained. A
	// missing object yields an error matching ErrNotExist (a directory,
	// symbolic link or special file: ErrNotObject too), before fn is called.
	// An error from fn is returned as is (unwrapped) and no Version.
	ReadVersioned(ctx context.Context, path string, fn func(r io.Reader) error) (Version, error)

	// Open opens an object for streaming reads (missing: ErrNotExist).
	Open(ctx context.Context, path string) (io.ReadCloser, error)

	// Stat describes one object (missing, or a directory: ErrNotExist).
	Stat(ctx context.Context, path string) (Info, error)

	// List calls fn, in the caller's goroutine, for every object whose path
	// starts with prefix ("" lists everything), recursively, in byte-wise
	// path order. Temporary objects (see TempPrefix) are never listed. If fn
	// returns an error, List stops and returns it.
	//
	// Stores with directories (Properties.Directories) also call fn, with
	// Info.Dir set and a Path ending in a slash (so that it sorts where
	// its contents would), for every directory strictly below the one
	// prefix names that holds no entry at all, and for every symbolic
	// link and special file (never followed): nothing else would show
	// that a path is taken by one (a planned file path where one stands
	// is unmanaged content). Callers that want objects only skip them.
	List(ctx context.Context, prefix string, fn func(Info) error) error

	// Delete removes the object at path; a missing object is not an error.
	// It may remove directories left empty below the root, but never one
	// that was there before this store first wrote below it (dirstore.Book),
	// so a rollback leaves a directory as the store found it.
	Delete(ctx context.Context, path string) error

	// Sync makes every Put that returned before it as durable as Put
	// promises. Stores that do not defer durability work (everything but
	// local.NewDeferred) return nil at once. Writers call it once after a
	// batch of Puts and before the catalog that records them.
	Sync(ctx context.Context) error

	// SweepTemp finds the temporary objects (see TempPrefix) that
	// interrupted writes left behind and, unless opts.DryRun, removes them,
	// then the directories this leaves empty (never the root, never a
	// directory that was empty before, nor one that was there before this
	// store first wrote below it). It returns the store paths of the
	// temporary objects found, sorted. Symbolic links are never followed.
	// It cannot tell another process's write in flight from a dead one:
	// only the holder of the destination lock may call it (without DryRun).
	SweepTemp(ctx context.Context, opts SweepOptions) ([]string, error)

	// IsTransient reports whether err, from this store, is a failure that
	// sending the same request again may cure (a broken connection, a
	// timeout, "try again"), not a refusal (a missing object, a failed
	// condition, rejected credentials). When unsure it says false. It looks
	// at no context and does no I/O. Adapters check IsPermanent first and end with the shared
	// IsTransient; wrappers ask the store they wrap.
	IsTransient(err error) bool

	// Properties describes what this store can do; wrappers return the
	// wrapped store's, less what they cannot pass on.
	Properties() Properties

	// Stage is the first half of Put (PutReplace or PutCreate; PutIfVersion
	// fails with ErrUnsupported): it writes exactly size bytes of r to a
	// temporary object (see TempPrefix), creating parent directories, and
	// makes nothing visible under path until Staged.Commit. If r fails, or
	// yields more or fewer than size bytes, Stage leaves nothing (no
	// temporary object, no directory it created). A store that cannot stage
	// returns an error matching ErrNoStaging. SweepTemp would remove a
	// staged object: only the lock's holder, which does not sweep while it
	// stages, may stage.
	Stage(ctx context.Context, path string, r io.Reader, size int64, opts PutOptions) (Staged, error)

	// RewriteIf streams the object at path to fn, which writes the
	// replacement to w, in one pass, without holding either in memory or
	// copying the new one twice (Properties.Rewrite: local disk, where
	// reading the old bytes and writing the new ones cost the same as a
	// compare alone). The replacement takes the object's place,
	// atomically as a PutIfVersion Put, only if the object fn was given has
	// Version ifVersion (what fn leaves unread is read and counted too)
	// and fn returns nil; otherwise the object is left as it was. A
	// failed condition, a missing object included, yields an error
	// matching ErrPrecondition; an error of fn is returned as is. It does
	// not return the replacement's Version, which would cost hashing it:
	// the next reader reads it. A store without Properties.Rewrite
	// returns an error matching errors.ErrUnsupported before fn is
	// called; callers then use ReadVersioned and a PutIfVersion Put.
	RewriteIf(ctx context.Context, path string, ifVersion Version, fn func(cur io.Reader, w io.Writer) error) error

	// ListPage lists a bounded page of objects in one request
	// (Properties.ListPages: S3, one ListObjectsV2), for callers that need
	// to know about a few keys under a prefix and must not pay for a large
	// one. It returns up to max objects whose paths start with prefix (as
	// List: temporary objects skipped, byte-wise order, Info.Version set
	// where the store reports it) and complete, true when no other object
	// has such a path. An incomplete page is a sample: callers decide only
	// from complete ones. A store without Properties.ListPages returns an
	// error matching errors.ErrUnsupported.
	ListPage(ctx context.Context, prefix string, max int) (infos []Info, complete bool, err error)

	// RemoveCreatedRoot removes the root, and the parents created with it,
	// if this store created it (Properties.CreatesRoot) and it is empty; it
	// reports whether the root is gone. A writer calls it after a failed
	// change left the root empty. Without Properties.CreatesRoot it returns
	// false and an error matching errors.ErrUnsupported.
	RemoveCreatedRoot(ctx context.Context) (bool, error)

	// String describes the root for humans, e.g. "s3://bucket/prefix".
	String() string

	// Close releases the store's resources.
	Close() error
}

// CallbackError carries a List (or RewriteIf) callback's error through an
// adapter's walk, so that List can return it unchanged.
type CallbackError struct{ Err error }

func (e *CallbackError) Error() string { return e.Err.Error() }

// Unwrap returns the callback's error.
func (e *CallbackError) Unwrap() error { return e.Err }

// ListResult is what an adapter's List returns for the error err of its
// walk: the callback's own error unchanged (List contract), any other
// error through wrap (which adds the store and the prefix), nil for nil.
func ListResult(err error, wrap func(error) error) error {
	var ce *CallbackError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce.Err
	default:
		return wrap(err)
	}
}

// ErrNoStaging is returned (wrapped) by Store.Stage on a store without
// Properties.Stage; it matches errors.ErrUnsupported too.
var ErrNoStaging = fmt.Errorf("storage: staged writes are not supported by this backend: %w", errors.ErrUnsupported)

// Properties are a store's capabilities, as data: the engine chooses its
// write protocol and checks from them and every wrapper passes them on, so
// no caller finds a capability by asserting a type.
type Properties struct {
	// Stage: Stage writes to a temporary object that Commit renames into
	// place (local disk, SFTP). A store without it (S3: no cheap rename,
	// a staged object would be a second upload or a server-side copy)
	// fails Stage with ErrNoStaging.
	Stage bool
	// Rewrite: RewriteIf replaces an object with a version computed from
	// its current bytes in one pass (local disk).
	Rewrite bool
	// AtomicSmallWrites: a Put with PutIfVersion never leaves a temporary
	// object behind, even when the writer dies in the middle of one (S3:
	// each is a single PUT), so a writer that recovered no dead run need
	// not sweep the root directory: a dead run's output writes left its
	// journal, whose recovery sweeps the whole root.
	AtomicSmallWrites bool
	// ListPages: ListPage answers with one bounded request (S3).
	ListPages bool
	// CreatesRoot: the first write creates the root directory, and
	// RemoveCreatedRoot removes it (local disk).
	CreatesRoot bool
	// Directories: paths live in real directories, so one name cannot be
	// both an object and a directory (local disk, SFTP); object stores
	// have keys only.
	Directories bool
	// Metadata: objects keep and serve PutOptions.Metadata (S3).
	Metadata bool
	// ServerConditions: conditional writes (PutCreate, PutIfVersion) are enforced
	// by the server rather than by this process, so a writer must prove
	// once per run that the server enforces them (spec section 6).
	ServerConditions bool
	// Remote: requests go to a server over a network, so one whose call
	// returned cut short (a cancelled context) may still take effect
	// after (SFTP, object stores); a local call's effect is known when it
	// returns.
	Remote bool
}

// Unsupported is the error, matching errors.ErrUnsupported, of a method
// that st's Properties rule out (RewriteIf without Rewrite, ...).
func Unsupported(st fmt.Stringer, op, path string) error {
	return fmt.Errorf("%s: %s %s: %w", st, op, path, errors.ErrUnsupported)
}

// Staged is a write that Store.Stage copied to a temporary object. Exactly
// one of Commit and Abort is meant to be called; a second call of either
// does nothing (Abort) or fails (Commit).
type Staged interface {
	// Commit makes the staged object visible under its path, as the
	// corresponding Put would have at its end (with PutCreate, it fails
	// with an error matching ErrPrecondition when an entry appeared at the
	// path meanwhile). Whatever its outcome, the temporary object is gone
	// afterwards, unless the connection to the server is.
	Commit(ctx context.Context) error
	// Abort removes the temporary object and the directories Stage
	// created that are now empty (a directory shared with other staged
	// writes goes with the last of them to be undone; one that was there
	// before stays, even empty). Aborting after Commit does nothing.
	Abort(ctx context.Context) error
}

// Metadata is the response metadata an object is served with, where the
// backend stores it with the object (S3). An empty field leaves the
// backend's default (on S3 the Content-Type follows the file extension).
type Metadata struct {
	CacheControl       string
	ContentType        string
	ContentDisposition string
	// ContentEncoding is "gzip" for an object stored gzip-compressed (spec
	// 3.4), served with "Content-Encoding: gzip" and read back by Get as
	// stored; "" for plain bytes, served with no Content-Encoding.
	ContentEncoding string
}

// IsZero reports whether m sets nothing.
func (m Metadata) IsZero() bool { return m == Metadata{} }

// PutMode says what a Put may replace (see Store.Put).
type PutMode int

const (
	// PutReplace creates or replaces the object.
	PutReplace PutMode = iota
	// PutCreate only creates the object: any entry at its path fails
	// the write with ErrPrecondition.
	PutCreate
	// PutIfVersion writes only if the object's Version is
	// PutOptions.Version ("" for absent), and returns the new Version.
	PutIfVersion
)

// Op names the mode in errors and logs: "put", "put-new" or "put-if".
func (m PutMode) Op() string {
	switch m {
	case PutCreate:
		return "put-new"
	case PutIfVersion:
		return "put-if"
	}
	return "put"
}

// PutOptions are the settings of one Put or Stage. The zero value
// replaces, without metadata.
type PutOptions struct {
	Mode PutMode
	// Version is the Version the object must have for a PutIfVersion
	// write; "" means it must be absent.
	Version Version
	// Metadata is stored with the object by backends that serve response
	// metadata (S3); local disk and SFTP ignore it (their web server
	// decides the headers).
	Metadata Metadata
	// SHA256 is the digest of the bytes written, "sha256:<64 hex>", or ""
	// when the caller does not know it. S3 signs it, so that the server
	// refuses a body that differs (package s3).
	SHA256 string
}

// IfVersion is the PutOptions of a compare-and-swap against v ("" for
// "only if absent").
func IfVersion(v Version) PutOptions { return PutOptions{Mode: PutIfVersion, Version: v} }

// PutIf writes the small object data to path with compare-and-swap
// against ifVersion (see IfVersion) and returns its new Version.
func PutIf(ctx context.Context, st Store, path string, data []byte, ifVersion Version) (Version, error) {
	return st.Put(ctx, path, bytes.NewReader(data), int64(len(data)), IfVersion(ifVersion))
}

// Seekable returns r as the io.ReadSeeker a PutIfVersion Put needs, or an
// error matching errors.ErrUnsupported when it cannot seek.
func Seekable(r io.Reader) (io.ReadSeeker, error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		return rs, nil
	}
	return nil, fmt.Errorf("a compare-and-swap write needs a reader that can seek, not %T: %w", r, errors.ErrUnsupported)
}

// SweepOptions scope Store.SweepTemp.
type SweepOptions struct {
	// Dirs limits the search to these directories (store paths, "" is the
	// root), not recursively. Nil searches the whole root, recursively.
	// A directory that does not exist (or is a symbolic link) is skipped.
	Dirs []string
	// DryRun only reports what would be removed.
	DryRun bool
	// Found, when set, is called with each temporary object found (and,
	// unless DryRun, removed), as it is found: its store path and its size
	// where the store knows it (local disk and SFTP; 0 for an incomplete
	// upload that S3 or Azure keeps). Unlike the returned paths, which a
	// retried sweep takes from its last attempt, it also hears of what an
	// attempt that failed later removed.
	Found func(Info)
}

// Cancelled returns ctx's error if ctx is done, else nil. Unlike ctx.Err
// it calls no Err method while ctx is live: under the root's lock Err checks
// the lock's fence, which reads a clock with a system call (lock.Bind), and
// a copy into a temporary file, which nothing reads before it is published,
// needs only to stop once the run is cancelled or the fence lapsed (the
// lock cancels the context then). The change a write makes visible, the
// rename or link of its temporary file, still checks ctx.Err right before
// it (publish; docs/design.md, "Fencing").
func Cancelled(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
		return nil
	}
}

// ContextReader returns a reader of r whose every Read fails once ctx is
// done (a Read already blocked in r is not interrupted).
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return &ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// HashBuffer is how many bytes a hashing read asks of a store at a time,
// each read with one check of the context (a clock read where it is a
// lock's fence); dirstore's BenchmarkReadDigested holds it.
const HashBuffer = 64 << 10

// Hash writes r into h, HashBuffer bytes at a time, each read failing once
// ctx is done, and returns how many bytes it hashed.
func Hash(ctx context.Context, h io.Writer, r io.Reader) (int64, error) {
	return io.CopyBuffer(h, ContextReader(ctx, r), make([]byte, HashBuffer))
}

// AnswerGrace is how long a request whose body went out whole may still
// wait for its answer after its context ended (a signal, a lapsed fence):
// the server may store it, and only its answer says whether it did, so a
// writer that cut it at once could not tell what its root holds. Past
// this the request is cut and its outcome stays unknown (docs/design.md,
// "Requests cut short").
const AnswerGrace = 2 * time.Second
