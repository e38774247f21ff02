// Package objstore is the part of storage.Store the object stores (S3, GCS,
// Azure Blob Storage) share, written once over a Client that each adapter
// implements with its SDK.
//
// The store's path p is the key Prefix+"/"+p (or p for an empty Prefix).
// "Directories" do not exist: a key "a/b" makes no key "a", and "f/x" next
// to "f" is a legal, separate key. Objects get a Content-Type from their
// extension unless Metadata sets one.
package objstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Object is an object as a listing or a HEAD request describes it.
type Object struct {
	Key     string // the whole key, prefix included
	Size    int64
	ModTime time.Time
	Version storage.Version
}

// Upload is an incomplete upload that a writer which died left behind
// (S3: a multipart upload; Azure: an uncommitted blob).
type Upload struct {
	Key  string
	ID   string // the upload's ID, where the server has one
	Size int64  // where the server lists it
}

// Write is one upload for Client.Put.
type Write struct {
	Body      *ExactReader // exactly Size bytes, or the request fails
	Size      int64
	Mode      storage.PutMode // with IfVersion, the condition (storage.Put)
	IfVersion storage.Version
	Metadata  storage.Metadata // ContentType set (from the extension unless given)
	SHA256    string           // the body's "sha256:<hex>", or "" (storage.PutOptions.SHA256)
	// ExpectContinue asks the server to confirm the condition ("Expect:
	// 100-continue") before the body goes out, so that a server refusing
	// it answers 412 without reading the body instead of resetting a
	// connection still sending it (which would leave the outcome unknown).
	// It is set for a PutIfVersion write of ExpectContinueMin bytes or
	// more: a smaller one (a lock, a journal) fits in the connection's
	// buffers and goes out with its headers, without waiting a round trip.
	ExpectContinue bool
}

// ExpectContinueMin is the smallest body of a Write with ExpectContinue.
const ExpectContinueMin = 1 << 20

// Client is what an adapter sends to its server. Its errors are the
// adapter's own, explained: a missing object's matches storage.ErrNotExist.
type Client interface {
	// List calls fn with the objects whose keys start with prefix, in the
	// server's order. With max 0 it lists them all, page after page;
	// with max > 0 it sends one request for at most max objects, and more
	// reports that the server said it has further ones.
	List(ctx context.Context, prefix string, max int, fn func(Object)) (more bool, err error)
	// Open starts one download of key and returns its body and the
	// Version of the bytes it streams.
	Open(ctx context.Context, key string) (io.ReadCloser, storage.Version, error)
	Head(ctx context.Context, key string) (Object, error)
	// Put sends w and returns the new Version (where the server gives it).
	// A refused condition matches storage.ErrPrecondition.
	Put(ctx context.Context, key string, w Write) (storage.Version, error)
	Delete(ctx context.Context, key string) error
	// Uploads lists the incomplete uploads whose keys start with prefix.
	Uploads(ctx context.Context, prefix string) ([]Upload, error)
	// Abort removes an incomplete upload; one already gone is no error.
	Abort(ctx context.Context, u Upload) error
}

// Config is what a Store says of its server.
type Config struct {
	URL     string // the bucket or container, e.g. "s3://bucket"
	Prefix  string // the root: a key prefix without leading or trailing "/", or ""
	MaxPage int    // the largest max of ListPage
	// MaxPutIf is the largest PutIfVersion write (one request), 0 for no
	// limit, and PutIfLimit says so in errors ("one PUT, at most 5 GiB").
	MaxPutIf    int64
	PutIfLimit  string
	VersionName string // the Version in errors ("ETag", "generation")
	SweepOp     string // what SweepTemp does to uploads, in its errors
	// Unanswered, where set, reports whether err, of a conditional write
	// cut short, came without an answer from the server. Some servers
	// answer a failed condition before reading the body and close the
	// connection, so the client sees a reset instead of the 412: one HEAD
	// then tells whether the condition failed (see cutShort).
	Unanswered func(err error) bool
}

// Store is an object store's storage.Store but IsTransient, which the
// adapter adds. It is safe for concurrent use.
type Store struct {
	c         Client
	cfg       Config
	keyPrefix string // cfg.Prefix+"/", or ""
	closed    atomic.Bool
}

// New returns the Store of c with cfg (whose Prefix loses a trailing "/").
func New(c Client, cfg Config) *Store {
	cfg.Prefix = strings.TrimSuffix(cfg.Prefix, "/")
	s := &Store{c: c, cfg: cfg}
	if cfg.Prefix != "" {
		s.keyPrefix = cfg.Prefix + "/"
	}
	return s
}

// Start checks the prefix, runs the client's setup and, unless skipCheck,
// lists one key, so that a wrong endpoint, bucket (what), credentials or
// permission fails before anything is planned or written.
func (s *Store) Start(ctx context.Context, what string, skipCheck bool, setup func() error) error {
	err := func() error {
		if s.cfg.Prefix != "" {
			if err := storage.CheckPath(s.cfg.Prefix); err != nil {
				return fmt.Errorf("prefix: %w", err)
			}
		}
		if err := setup(); err != nil || skipCheck {
			return cmp.Or(err, ctx.Err())
		}
		if _, err := s.c.List(ctx, s.keyPrefix, 1, func(Object) {}); err != nil {
			return fmt.Errorf("list %s: %w", what, err)
		}
		return ctx.Err()
	}()
	if err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	return nil
}

// String returns the URL with the prefix, e.g. "s3://bucket/prefix".
func (s *Store) String() string {
	if s.cfg.Prefix == "" {
		return s.cfg.URL
	}
	return s.cfg.URL + "/" + s.cfg.Prefix
}

// Close marks the store closed: later calls fail with os.ErrClosed.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

// Key returns the object key of the store path p.
func (s *Store) Key(p string) string { return s.keyPrefix + p }

func (s *Store) errorf(op, p string, err error) error {
	return fmt.Errorf("%s: %s %s: %w", s, op, p, err)
}

// begin returns the error of a call on p: its own, or os.ErrClosed, or ctx's.
func (s *Store) begin(ctx context.Context, p string) error {
	return cmp.Or(storage.CheckPath(p), s.isClosed(), ctx.Err())
}

func (s *Store) beginList(prefix string) error {
	_, _, err := storage.SplitPrefix(prefix)
	return cmp.Or(err, s.isClosed())
}

func (s *Store) isClosed() error {
	if s.closed.Load() {
		return os.ErrClosed
	}
	return nil
}

// Put implements storage.Store in one request; a PutIfVersion write carries
// no metadata. A reader that fails, yields more or fewer bytes, or a context
// done before the last byte cuts the request short, so nothing is stored.
func (s *Store) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	v, err := s.put(ctx, p, r, size, opts)
	if err != nil {
		return "", s.errorf(opts.Mode.Op(), p, err)
	}
	return v, nil
}

func (s *Store) put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if err := s.begin(ctx, p); err != nil {
		return "", err
	}
	w := Write{Size: size, Mode: opts.Mode, IfVersion: opts.Version, Metadata: opts.Metadata, SHA256: opts.SHA256}
	if w.Mode == storage.PutIfVersion {
		rs, err := storage.Seekable(r)
		if err != nil {
			return "", err
		}
		if s.cfg.MaxPutIf > 0 && size > s.cfg.MaxPutIf {
			return "", fmt.Errorf("%d bytes: a conditional write is %s (%d bytes)", size, s.cfg.PutIfLimit, s.cfg.MaxPutIf)
		}
		if w.SHA256 == "" { // for a store that signs it (S3), in a first pass
			if w.SHA256, err = digest(ctx, rs, size); err != nil {
				return "", err
			}
		}
		if _, err := rs.Seek(0, io.SeekStart); err != nil {
			return "", fmt.Errorf("rewind the input: %w", err)
		}
		r, w.Metadata = rs, storage.Metadata{}
	}
	w.Metadata.ContentType = cmp.Or(w.Metadata.ContentType, ContentType(p))
	w.ExpectContinue = w.Mode == storage.PutIfVersion && size >= ExpectContinueMin
	er, err := NewExactReader(ctx, r, size)
	if err != nil {
		return "", err
	}
	w.Body = er
	v, err := s.send(ctx, s.Key(p), w)
	switch {
	case er.Err() != nil:
		return "", er.Err() // the reader's failure is the cause, whatever the client made of it
	case err != nil && w.Mode == storage.PutIfVersion && er.Left() > 0 && s.cfg.Unanswered != nil && s.cfg.Unanswered(err):
		return "", s.cutShort(ctx, p, w.IfVersion, err)
	case err != nil:
		return "", err
	case er.Left() != 0:
		return "", fmt.Errorf("the client sent %d of %d bytes", size-er.Left(), size)
	case w.Mode != storage.PutIfVersion:
		return "", nil
	case v == "":
		return "", fmt.Errorf("the server returned no %s", s.cfg.VersionName)
	}
	return v, nil
}

// digest returns the "sha256:<hex>" of rs from its start, which must have
// size bytes: a server that signs the digest but keeps a body cut short
// (versitygw) would store the shorter one of a digest of fewer.
func digest(ctx context.Context, rs io.ReadSeeker, size int64) (string, error) {
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind the input: %w", err)
	}
	er, err := NewExactReader(ctx, rs, size)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(h, er, make([]byte, storage.HashBuffer)); err != nil {
		return "", err
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil)), nil
}

// send is the client's Put of w under a context that ctx cancels at once
// only while the body is incomplete, when the server cannot store it. Once
// the last byte went out, a done ctx waits up to storage.AnswerGrace for
// the answer, so that the writer knows what its root holds rather than
// leave a request that may still land after it settled (docs/design.md,
// "Requests cut short").
func (s *Store) send(ctx context.Context, key string, w Write) (storage.Version, error) {
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() {
		if !w.Body.Whole() {
			cancel(context.Cause(ctx))
			return
		}
		t := time.AfterFunc(storage.AnswerGrace, func() {
			cancel(fmt.Errorf("%w (no answer within %v of it)", context.Cause(ctx), storage.AnswerGrace))
		})
		context.AfterFunc(rctx, func() { t.Stop() })
	})
	defer stop()
	return s.c.Put(rctx, key, w)
}

// cutShort returns the error of a conditional write whose connection
// failed, with err, before the body was sent whole: the server cannot
// have stored it. If the condition does not hold now, the error matches
// storage.ErrPrecondition (nothing was written, and the condition failed);
// otherwise it is err, a transient failure.
func (s *Store) cutShort(ctx context.Context, p string, ifVersion storage.Version, err error) error {
	if ctx.Err() != nil {
		return err
	}
	o, serr := s.c.Head(ctx, s.Key(p))
	switch {
	case serr == nil && ifVersion == "":
		return fmt.Errorf("%w: object exists (the server closed the connection before the body was sent: %v)", storage.ErrPrecondition, err)
	case serr == nil && o.Version != "" && o.Version != ifVersion:
		return fmt.Errorf("%w: version is not %s (the server closed the connection before the body was sent: %v)", storage.ErrPrecondition, ifVersion, err)
	case errors.Is(serr, storage.ErrNotExist) && ifVersion != "":
		return fmt.Errorf("%w: object is absent, want version %s (the server closed the connection before the body was sent: %v)", storage.ErrPrecondition, ifVersion, err)
	}
	return err
}

// Get implements storage.Store, with the Version of the same response.
func (s *Store) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	var data []byte
	v, err := s.read(ctx, p, func(r io.Reader) (err error) {
		data, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		return nil, "", s.errorf("get", p, err)
	}
	return data, v, nil
}

// ReadVersioned implements storage.Store: one streaming download, whose
// response's Version describes the bytes streamed, even if the object is
// replaced meanwhile. What fn leaves unread is drained.
func (s *Store) ReadVersioned(ctx context.Context, p string, fn func(io.Reader) error) (storage.Version, error) {
	var fnErr error
	v, err := s.read(ctx, p, func(r io.Reader) error {
		fnErr = fn(r)
		return fnErr
	})
	switch {
	case fnErr != nil:
		return "", fnErr
	case err != nil:
		return "", s.errorf("read", p, err)
	}
	return v, nil
}

func (s *Store) read(ctx context.Context, p string, fn func(io.Reader) error) (storage.Version, error) {
	if err := s.begin(ctx, p); err != nil {
		return "", err
	}
	body, v, err := s.c.Open(ctx, s.Key(p))
	if err != nil {
		return "", err
	}
	defer body.Close()
	if v == "" {
		return "", fmt.Errorf("the server returned no %s", s.cfg.VersionName)
	}
	if err := fn(body); err != nil {
		return "", err
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return "", err
	}
	return v, nil
}

// Open implements storage.Store: one streaming download.
func (s *Store) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	if err := s.begin(ctx, p); err != nil {
		return nil, s.errorf("open", p, err)
	}
	body, _, err := s.c.Open(ctx, s.Key(p))
	if err != nil {
		return nil, s.errorf("open", p, err)
	}
	return body, nil
}

// Stat implements storage.Store: one HEAD request.
func (s *Store) Stat(ctx context.Context, p string) (storage.Info, error) {
	if err := s.begin(ctx, p); err != nil {
		return storage.Info{}, s.errorf("stat", p, err)
	}
	o, err := s.c.Head(ctx, s.Key(p))
	if err != nil {
		return storage.Info{}, s.errorf("stat", p, err)
	}
	return storage.Info{Path: p, Size: o.Size, ModTime: o.ModTime, Version: o.Version}, nil
}

// Delete implements storage.Store: one request.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := s.begin(ctx, p); err != nil {
		return s.errorf("delete", p, err)
	}
	if err := s.c.Delete(ctx, s.Key(p)); err != nil && !errors.Is(err, storage.ErrNotExist) {
		return s.errorf("delete", p, err)
	}
	return nil
}

// rel returns a listed key's store path, and whether it is a store object
// (below the root, no "/"-ending "directory marker", not temporary).
func (s *Store) rel(key string) (string, bool) {
	rel, ok := strings.CutPrefix(key, s.keyPrefix)
	return rel, ok && rel != "" && !strings.HasSuffix(rel, "/") && !storage.IsTemp(rel)
}

func (s *Store) collect(infos *[]storage.Info) func(Object) {
	return func(o Object) {
		if rel, ok := s.rel(o.Key); ok {
			*infos = append(*infos, storage.Info{Path: rel, Size: o.Size, ModTime: o.ModTime, Version: o.Version})
		}
	}
}

// List implements storage.Store: the server's listing, collected whole
// and sorted if it is not (some S3-compatible servers list in another
// order), then handed to fn. A listing that names a key twice cannot be
// trusted to be complete either: it fails.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return storage.ListResult(s.list(ctx, prefix, fn), func(err error) error {
		return s.errorf("list", strconv.Quote(prefix), err)
	})
}

func (s *Store) list(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	if err := s.beginList(prefix); err != nil {
		return err
	}
	var infos []storage.Info
	if _, err := s.c.List(ctx, s.Key(prefix), 0, s.collect(&infos)); err != nil {
		return err
	}
	infos, err := sortListing(infos)
	if err != nil {
		return err
	}
	for _, info := range infos {
		if err := fn(info); err != nil {
			return &storage.CallbackError{Err: err}
		}
	}
	return nil
}

// ListPage implements storage.Store: one listing request for up to max+1
// keys, of which it returns the store objects among the first max.
func (s *Store) ListPage(ctx context.Context, prefix string, max int) ([]storage.Info, bool, error) {
	infos, complete, err := s.listPage(ctx, prefix, max)
	if err != nil {
		return nil, false, s.errorf("list", strconv.Quote(prefix), err)
	}
	return infos, complete, nil
}

func (s *Store) listPage(ctx context.Context, prefix string, max int) ([]storage.Info, bool, error) {
	if err := s.beginList(prefix); err != nil {
		return nil, false, err
	}
	if max < 1 || max > s.cfg.MaxPage {
		return nil, false, fmt.Errorf("page size %d: want 1 to %d", max, s.cfg.MaxPage)
	}
	var objs []Object
	more, err := s.c.List(ctx, s.Key(prefix), max+1, func(o Object) { objs = append(objs, o) })
	if err != nil {
		return nil, false, err
	}
	// A page may hold fewer keys than asked for and still have a next
	// one (Azure ends pages at partition boundaries).
	complete := !more && len(objs) <= max
	var infos []storage.Info
	add := s.collect(&infos)
	for _, o := range objs[:min(len(objs), max)] {
		add(o)
	}
	infos, err = sortListing(infos)
	return infos, complete, err
}

// SweepTemp implements storage.Store on the incomplete uploads a writer that
// died left (see Upload), which the server keeps and bills, unseen by
// listings: one path per upload (on an error, those found so far).
func (s *Store) SweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	found, err := s.sweep(ctx, opts)
	if err != nil {
		return found, fmt.Errorf("%s: %s: %w", s, s.cfg.SweepOp, err)
	}
	return found, nil
}

func (s *Store) sweep(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	dirs, err := storage.CheckSweepDirs(opts.Dirs)
	if err := cmp.Or(err, s.isClosed(), ctx.Err()); err != nil {
		return nil, err
	}
	// One listing of the whole root, or one per directory asked for (its
	// keys start with the directory's prefix, and the listing goes below).
	whole := opts.Dirs == nil
	if whole {
		dirs = []string{""}
	}
	var dead []Upload
	for _, d := range dirs {
		prefix := d
		if d != "" {
			prefix += "/"
		}
		ups, err := s.c.Uploads(ctx, s.Key(prefix))
		if err != nil {
			return nil, err
		}
		for _, u := range ups {
			rel, ok := s.rel(u.Key)
			if dir, _ := path.Split(rel); ok && (whole || dir == prefix) {
				u.Key = rel
				dead = append(dead, u)
			}
		}
	}
	slices.SortFunc(dead, func(a, b Upload) int { return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.ID, b.ID)) })
	found := make([]string, len(dead))
	for i, u := range dead {
		found[i] = u.Key
	}
	for _, u := range dead {
		if err := ctx.Err(); err != nil {
			return found, err
		}
		if !opts.DryRun {
			if err := s.c.Abort(ctx, Upload{Key: s.Key(u.Key), ID: u.ID, Size: u.Size}); err != nil {
				return found, fmt.Errorf("%s: %w", u.Key, err)
			}
		}
		if opts.Found != nil {
			opts.Found(storage.Info{Path: u.Key, Size: u.Size})
		}
	}
	return found, nil
}

// Sync implements storage.Store: a write is durable once answered.
func (s *Store) Sync(context.Context) error { return nil }

// Properties are an object store's: every conditional write is one
// request (never a multipart upload, so it leaves nothing behind whatever
// happens to the writer), listings come in bounded pages, objects keep
// their metadata, and the server enforces the conditions. No staging: an
// object store has no cheap rename, and a write is atomic already.
var Properties = storage.Properties{AtomicSmallWrites: true, ListPages: true, Metadata: true, ServerConditions: true, Remote: true}

// Backend returns b with what every object store's descriptor says: paths
// are key prefixes, 8 transfers at once, Remote, and Properties.
func Backend(b storage.Backend) storage.Backend {
	b.Path, b.Jobs, b.Remote, b.Properties = storage.PathKey, 8, true, Properties
	return b
}

// Properties implements storage.Store (see the variable Properties).
func (s *Store) Properties() storage.Properties { return Properties }

// RewriteIf implements storage.Store: object stores do not rewrite.
func (s *Store) RewriteIf(_ context.Context, p string, _ storage.Version, _ func(io.Reader, io.Writer) error) error {
	return storage.Unsupported(s, "rewrite-if", p)
}

// RemoveCreatedRoot implements storage.Store: a bucket has no root to remove.
func (s *Store) RemoveCreatedRoot(context.Context) (bool, error) {
	return false, storage.Unsupported(s, "remove-created-root", "")
}

// Stage implements storage.Store: it fails with storage.ErrNoStaging.
func (s *Store) Stage(_ context.Context, p string, _ io.Reader, _ int64, _ storage.PutOptions) (storage.Staged, error) {
	return nil, fmt.Errorf("%s: stage %s: %w", s, p, storage.ErrNoStaging)
}
