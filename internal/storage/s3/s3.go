// Package s3 implements storage.Store on a key prefix of an S3 bucket (AWS
// or any S3-compatible server), with github.com/minio/minio-go/v7.
//
// The store's path p is the object key Prefix+"/"+p (or p for an empty
// Prefix). Paths must be clean relative slash-separated paths none of whose
// segments starts with storage.TempPrefix, else storage.ErrInvalidPath.
// "Directories" do not exist: an object "a/b" makes no object "a", and a
// path below an object ("f/x" next to "f") is a legal, separate key.
//
// Writes: Put is one PutObject of exactly size bytes, which S3 applies
// atomically: readers see the old object or the new one. A reader that
// fails, yields more or fewer bytes, or a cancelled context aborts the
// request before its last byte, so the server stores nothing. Objects
// larger than minio-go's part size (16 MiB) go up as
// a multipart upload, which is also invisible until completed and is
// aborted (its parts deleted) on failure. The body is streamed once, so a
// failed Put is not retried (reads, listings and deletes are, by minio-go).
// Every object gets a Content-Type from its extension
// ("text/html; charset=utf-8" for .html).
//
// PutIfVersion writes are a single conditional PutObject (never a
// multipart upload, so at most 5 GiB), enforced by the server: the zero
// Version sends "If-None-Match: *" (create only if absent), another Version
// "If-Match: <etag>"; the server's 412 (or 409 for a concurrent conditional
// write, or 404 for an If-Match on a missing key) becomes
// storage.ErrPrecondition. Conditional writes are never retried, so a lost
// response cannot turn a won race into a reported conflict. Versions are the
// objects' ETags.
//
// Deadlines: no request waits forever on a server that went silent, a
// stalled transfer or a network partition. Each new connection has
// Options.DialTimeout to connect and again to complete its TLS handshake;
// a sent request has Options.ResponseTimeout to get its response's
// headers; and every connection carries a progress deadline: a request
// fails once no byte has moved on its connection, either way, for
// Options.IdleTimeout, however long the transfer takes while bytes flow.
// minio-go sends a request that failed that way (or with another transient
// error) up to Options.MaxAttempts times in all (3 by default), with a
// backoff of at most a second in between, so a vanished server fails a
// call within seconds (refused connections) or about MaxAttempts times the
// timeouts (a silent one); retrying beyond that is the caller's decision.
//
// Credentials come from the standard AWS chain (see newCredentials), never
// from configuration; String and errors show only "s3://bucket/prefix".
package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Options configure a Store. The s3 package reads no configuration: the
// caller passes everything here, and the environment through Getenv.
type Options struct {
	Bucket string
	// Prefix is the destination root: a key prefix without leading or
	// trailing "/", possibly "" (the whole bucket).
	Prefix string
	// Region is the bucket's region; "" lets the client ask the server
	// (GetBucketLocation).
	Region string
	// Endpoint is the server's URL, e.g. "http://127.0.0.1:9000" or
	// "https://s3.eu-central-1.amazonaws.com"; "" means AWS
	// (https://s3.amazonaws.com). Without a scheme, https is assumed.
	Endpoint string
	// PathStyle selects path-style requests (https://host/bucket/key)
	// instead of virtual-host style (https://bucket.host/key); most
	// S3-compatible servers need it.
	PathStyle bool
	// Getenv reads the credential environment variables (AWS_ACCESS_KEY_ID,
	// ...). nil means an empty environment.
	Getenv func(string) string
	// Transport is the HTTP transport; nil means minio-go's default. The
	// store installs its timeouts (below) into a clone of minio-go's
	// default, or of an *http.Transport given here (replacing its
	// TLSHandshakeTimeout, ResponseHeaderTimeout and IdleConnTimeout and
	// wrapping its dialer). Any other http.RoundTripper is used as it is:
	// the timeouts are then its own business, and only the calls'
	// contexts bound the requests.
	//
	// No configuration field sets it: Open (the s3 block) leaves it nil,
	// so distributor always talks through minio-go's default transport
	// with the block's timeouts. It is the adapter's HTTP seam for a
	// program that builds a Store itself, as minio.Options.Transport is
	// the client's: the tests use it to trust a test server's certificate
	// and to see or cut requests on the wire (docs/design.md, "S3
	// Options.Transport").
	Transport http.RoundTripper
	// DialTimeout bounds the TCP connect, and then the TLS handshake, of
	// each new connection; 0 means 10 seconds.
	DialTimeout time.Duration
	// ResponseTimeout bounds the wait for a response's headers once the
	// request is sent; 0 means 30 seconds.
	ResponseTimeout time.Duration
	// IdleTimeout is the progress deadline of a connection: a request
	// fails when no byte has moved on its connection, in either
	// direction, for this long (a stalled upload or download, a server
	// that went silent, a network partition). 0 means 30 seconds. It also
	// bounds the wait for response headers, and a Put whose reader yields
	// nothing for that long fails too; pauses between the Reads of an
	// object opened with Open do not count (nothing waits on the
	// connection then). Idle pooled connections are closed after half of
	// it.
	IdleTimeout time.Duration
	// MaxAttempts is how many times minio-go sends a request that failed
	// in a way it deems transient (a network error, a timeout, a 5xx or
	// throttling answer), with a short backoff in between (at most 1s);
	// 0 means 3, 1 disables retries. Conditional writes and single-request
	// uploads (a streamed body cannot be sent again) are sent once
	// whatever it says; the parts of a multipart upload are retried.
	MaxAttempts int
	// SkipCheck leaves out the listing request New makes to check the
	// endpoint, bucket, credentials and s3:ListBucket permission: they are
	// then checked by the caller's first request, which fails with the
	// same explanation (NoSuchBucket: "the bucket does not exist"; a
	// rejected or insufficient credential: "check the credentials ...").
	// A writer sets it when its first request is one it makes anyway (the
	// catalog's read, before anything is planned or written), to save a
	// request per run.
	SkipCheck bool
}

// expectContinueTimeout is how long a conditional PUT waits for the
// server's "100 Continue" before it sends its body anyway.
const expectContinueTimeout = time.Second

// expectContinueMin is the smallest body for which a conditional PUT asks
// for "100 Continue" (see expectContinue). A smaller one (a lock, a
// journal, a small catalog) goes out with its headers, without waiting a
// round trip: it fits in the connection's buffers, so a server that
// refuses it early does not cut its sending short.
const expectContinueMin = 1 << 20

// Defaults of Options.
const (
	defaultDialTimeout     = 10 * time.Second
	defaultResponseTimeout = 30 * time.Second
	defaultIdleTimeout     = 30 * time.Second
	defaultMaxAttempts     = 3
)

// Store is a storage.Store on a key prefix of an S3 bucket. It is safe for
// concurrent use by multiple goroutines.
type Store struct {
	client    *minio.Client
	bucket    string
	prefix    string // the root: "" or a clean key prefix
	keyPrefix string // prefix+"/", or ""
	partSize  uint64 // of multipart uploads; 0: minio-go's (16 MiB, more above 156 GiB)
	closed    atomic.Bool
}

var _ storage.Store = (*Store)(nil)

// New checks opts, sets up the client and lists one key of the root, so
// that a wrong endpoint, bucket, credentials or permission fails here,
// before anything is planned or written (unless opts.SkipCheck: then the
// caller's first request does).
func New(ctx context.Context, opts Options) (*Store, error) {
	prefix := strings.TrimSuffix(opts.Prefix, "/")
	s := &Store{bucket: opts.Bucket, prefix: prefix}
	if prefix != "" {
		s.keyPrefix = prefix + "/"
	}
	if err := s.init(ctx, opts); err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	return s, nil
}

func (s *Store) init(ctx context.Context, opts Options) error {
	if s.bucket == "" {
		return errors.New("bucket is required")
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = defaultDialTimeout
	}
	if opts.ResponseTimeout <= 0 {
		opts.ResponseTimeout = defaultResponseTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = defaultIdleTimeout
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = defaultMaxAttempts
	}
	if s.prefix != "" {
		if err := checkPath(s.prefix); err != nil {
			return fmt.Errorf("prefix: %w", err)
		}
	}
	host, secure, err := parseEndpoint(opts.Endpoint)
	if err != nil {
		return err
	}
	lookup := minio.BucketLookupAuto
	if opts.PathStyle {
		lookup = minio.BucketLookupPath
	}
	transport, err := newTransport(&opts, secure)
	if err != nil {
		return fmt.Errorf("http transport: %w", err)
	}
	s.client, err = minio.New(host, &minio.Options{
		Creds:        newCredentials(opts.Getenv),
		Secure:       secure,
		Region:       opts.Region,
		BucketLookup: lookup,
		Transport:    expectTransport{transport},
		MaxRetries:   opts.MaxAttempts,
	})
	if err != nil {
		return err
	}
	if opts.SkipCheck {
		return ctx.Err()
	}
	// One listing request proves the endpoint, the credentials, the bucket
	// and the s3:ListBucket permission, with an error body that says which
	// failed (a HEAD request's answer has none).
	// Exactly one request (the ListObjects iterator would fetch the next
	// page ahead); Core's call takes no context, so check it around.
	if err := ctx.Err(); err != nil {
		return err
	}
	core := minio.Core{Client: s.client}
	if _, err := core.ListObjectsV2(s.bucket, s.keyPrefix, "", "", "", 1); err != nil {
		return fmt.Errorf("list bucket %s: %w", s.bucket, explain(err))
	}
	return ctx.Err()
}

// String returns "s3://bucket/prefix" (or "s3://bucket").
func (s *Store) String() string {
	if s.prefix == "" {
		return "s3://" + s.bucket
	}
	return "s3://" + s.bucket + "/" + s.prefix
}

// Close marks the store closed: later calls fail with an error matching
// os.ErrClosed. The client holds no connection that needs closing beyond
// the HTTP transport's idle pool.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

// key returns the object key of the store path p.
func (s *Store) key(p string) string { return s.keyPrefix + p }

// errorf wraps err with the store, the operation and the path.
func (s *Store) errorf(op, p string, err error) error {
	return fmt.Errorf("%s: %s %s: %w", s, op, p, err)
}

// begin validates p and checks that the store is open and ctx alive.
func (s *Store) begin(ctx context.Context, p string) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if s.closed.Load() {
		return os.ErrClosed
	}
	return ctx.Err()
}

// Put implements storage.Store: see the package documentation. With
// PutCreate it sends If-None-Match: *, which the server answers with 412
// (an error matching storage.ErrPrecondition) when the key exists. Objects
// above the part size go up in parts, and not every server enforces the
// condition on completing a multipart upload. With PutIfVersion it is one
// conditional PutObject of exactly size bytes of r, from its start, never
// a multipart upload (whose completion not every server checks against
// the condition; see the package documentation); size may be at most
// MaxPutIfSize. A reader that fails, yields more or fewer bytes, or a
// context done before the last byte, cuts that request short, so the
// server stores nothing.
func (s *Store) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	var (
		v   storage.Version
		err error
	)
	if opts.Mode == storage.PutIfVersion {
		v, err = s.putIf(ctx, p, r, size, opts.Version)
	} else {
		err = s.put(ctx, p, r, size, opts.Mode == storage.PutCreate, opts)
	}
	if err != nil {
		return "", s.errorf(opts.Mode.Op(), p, err)
	}
	return v, nil
}

func (s *Store) put(ctx context.Context, p string, r io.Reader, size int64, exclusive bool, po storage.PutOptions) error {
	if err := s.begin(ctx, p); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("negative size %d", size)
	}
	er, err := storage.NewExactReader(ctx, r, size)
	if err != nil {
		return err
	}
	opts := minio.PutObjectOptions{ContentType: storage.ContentType(p), PartSize: s.partSize,
		CacheControl: po.Metadata.CacheControl, ContentDisposition: po.Metadata.ContentDisposition}
	if po.Metadata.ContentType != "" {
		opts.ContentType = po.Metadata.ContentType
	}
	if size == 0 {
		// minio-go's streaming signature sends an empty body as chunked
		// transfer without Content-Length, which servers may refuse
		// (411); an empty payload needs no streaming signature.
		opts.DisableContentSha256 = true
	}
	if exclusive {
		opts.SetMatchETagExcept("*")
	}
	_, err = s.client.PutObject(ctx, s.bucket, s.key(p), er, size, opts)
	if er.Err() != nil {
		return er.Err() // the reader's failure is the cause, whatever the client made of it
	}
	if err != nil {
		if resp := minio.ToErrorResponse(err); exclusive && (resp.StatusCode == http.StatusPreconditionFailed ||
			resp.Code == "PreconditionFailed" || resp.StatusCode == http.StatusConflict || resp.Code == "ConditionalRequestConflict") {
			return fmt.Errorf("%w: an object exists: %w", storage.ErrPrecondition, explain(err))
		}
		return explain(err)
	}
	if er.Left() != 0 {
		return fmt.Errorf("the client sent %d of %d bytes", size-er.Left(), size)
	}
	return nil
}

// cutShort returns the error of a conditional PUT whose connection failed,
// with err, before the body was sent whole: the server cannot have stored
// it. Some servers (versitygw) answer a failed condition before reading
// the body and close the connection, so the client sees a reset instead of
// the 412. One HEAD tells: if the condition does not hold now, the error
// matches storage.ErrPrecondition (nothing was written, and the condition
// failed); otherwise it is err, a transient failure.
func (s *Store) cutShort(ctx context.Context, p string, ifVersion storage.Version, err error) error {
	if ctx.Err() != nil {
		return err
	}
	info, serr := s.client.StatObject(ctx, s.bucket, s.key(p), minio.StatObjectOptions{})
	serr = explain(serr)
	switch {
	case serr == nil && ifVersion == "":
		return fmt.Errorf("%w: object exists (the server closed the connection before the body was sent: %v)", storage.ErrPrecondition, err)
	case serr == nil && info.ETag != "" && storage.Version(info.ETag) != ifVersion:
		return fmt.Errorf("%w: version is not %s (the server closed the connection before the body was sent: %v)", storage.ErrPrecondition, ifVersion, err)
	case errors.Is(serr, storage.ErrNotExist) && ifVersion != "":
		return fmt.Errorf("%w: object is absent, want version %s (the server closed the connection before the body was sent: %v)", storage.ErrPrecondition, ifVersion, err)
	}
	return err
}

// Get implements storage.Store: it reads an object whole, with the ETag of
// the same response as its Version.
func (s *Store) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	data, v, err := s.get(ctx, p)
	if err != nil {
		return nil, "", s.errorf("get", p, err)
	}
	return data, v, nil
}

func (s *Store) get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	body, info, err := s.getObject(ctx, p)
	if err != nil {
		return nil, "", err
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, "", err
	}
	if info.ETag == "" {
		return nil, "", errors.New("the server returned no ETag")
	}
	return data, storage.Version(info.ETag), nil
}

// getObject starts one GET of the object at p.
func (s *Store) getObject(ctx context.Context, p string) (io.ReadCloser, minio.ObjectInfo, error) {
	if err := s.begin(ctx, p); err != nil {
		return nil, minio.ObjectInfo{}, err
	}
	core := minio.Core{Client: s.client}
	body, info, _, err := core.GetObject(ctx, s.bucket, s.key(p), minio.GetObjectOptions{})
	if err != nil {
		return nil, minio.ObjectInfo{}, explain(err)
	}
	return body, info, nil
}

// ReadVersioned implements storage.Store: one streaming GET, whose
// response's ETag is the Version (so it describes the bytes streamed, even
// if the object is replaced meanwhile). What fn leaves unread is drained.
// The body fails once ctx is done. A missing key yields an error matching
// storage.ErrNotExist before fn is called.
func (s *Store) ReadVersioned(ctx context.Context, p string, fn func(io.Reader) error) (storage.Version, error) {
	body, info, err := s.getObject(ctx, p)
	if err != nil {
		return "", s.errorf("read", p, err)
	}
	defer body.Close()
	if info.ETag == "" {
		return "", s.errorf("read", p, errors.New("the server returned no ETag"))
	}
	if err := fn(body); err != nil {
		return "", err
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return "", s.errorf("read", p, err)
	}
	return storage.Version(info.ETag), nil
}

// MaxPutIfSize is the largest object a PutIfVersion Put writes: S3's
// limit for a single PUT, 5 GiB.
const MaxPutIfSize = 5 << 30

func (s *Store) putIf(ctx context.Context, p string, in io.Reader, size int64, ifVersion storage.Version) (storage.Version, error) {
	if err := s.begin(ctx, p); err != nil {
		return "", err
	}
	r, err := storage.Seekable(in)
	if err != nil {
		return "", err
	}
	switch {
	case size < 0:
		return "", fmt.Errorf("negative size %d", size)
	case size > MaxPutIfSize:
		return "", fmt.Errorf("%d bytes: a conditional write is one PUT, at most %d bytes (5 GiB)", size, int64(MaxPutIfSize))
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind the input: %w", err)
	}
	er, err := storage.NewExactReader(ctx, r, size)
	if err != nil {
		return "", err
	}
	// An empty body is sent unsigned: see put.
	opts := minio.PutObjectOptions{ContentType: storage.ContentType(p), DisableMultipart: true, DisableContentSha256: size == 0}
	if ifVersion == "" {
		opts.SetMatchETagExcept("*")
	} else {
		opts.SetMatchETag(string(ifVersion))
	}
	// A body that cannot seek is never retried by the client (nor read
	// whole into memory).
	body := struct{ io.Reader }{er}
	pctx := ctx
	if size >= expectContinueMin {
		pctx = expectContinue(ctx)
	}
	info, err := s.client.PutObject(pctx, s.bucket, s.key(p), body, size, opts)
	if er.Err() != nil {
		return "", er.Err() // the reader's failure is the cause, whatever the client made of it
	}
	if err != nil {
		resp := minio.ToErrorResponse(err)
		switch {
		case resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed":
			if ifVersion == "" {
				return "", fmt.Errorf("%w: object exists", storage.ErrPrecondition)
			}
			return "", fmt.Errorf("%w: version is not %s", storage.ErrPrecondition, ifVersion)
		case resp.StatusCode == http.StatusConflict || resp.Code == "ConditionalRequestConflict":
			return "", fmt.Errorf("%w: a concurrent conditional write: %w", storage.ErrPrecondition, explain(err))
		case ifVersion != "" && (resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound && resp.Code != "NoSuchBucket"):
			return "", fmt.Errorf("%w: object is absent, want version %s", storage.ErrPrecondition, ifVersion)
		case resp.Code == "" && resp.StatusCode == 0 && er.Left() > 0:
			return "", s.cutShort(ctx, p, ifVersion, err)
		}
		return "", explain(err)
	}
	if er.Left() != 0 {
		return "", fmt.Errorf("the client sent %d of %d bytes", size-er.Left(), size)
	}
	if info.ETag == "" {
		return "", errors.New("the server returned no ETag")
	}
	return storage.Version(info.ETag), nil
}

// Open implements storage.Store: one streaming GET.
func (s *Store) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	body, _, err := s.getObject(ctx, p)
	if err != nil {
		return nil, s.errorf("open", p, err)
	}
	return body, nil
}

// Stat implements storage.Store (HeadObject).
func (s *Store) Stat(ctx context.Context, p string) (storage.Info, error) {
	if err := s.begin(ctx, p); err != nil {
		return storage.Info{}, s.errorf("stat", p, err)
	}
	info, err := s.client.StatObject(ctx, s.bucket, s.key(p), minio.StatObjectOptions{})
	if err != nil {
		return storage.Info{}, s.errorf("stat", p, explain(err))
	}
	return storage.Info{Path: p, Size: info.Size, ModTime: info.LastModified, Version: etagVersion(info.ETag)}, nil
}

// etagVersion is the Version of an object with the given ETag, as Get and
// PutIfVersion return it ("" for none).
func etagVersion(etag string) storage.Version { return storage.Version(etag) }

// Delete implements storage.Store (DeleteObject). Deleting a missing
// object is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := s.begin(ctx, p); err != nil {
		return s.errorf("delete", p, err)
	}
	err := s.client.RemoveObject(ctx, s.bucket, s.key(p), minio.RemoveObjectOptions{})
	if err != nil {
		if err := explain(err); !errors.Is(err, fs.ErrNotExist) {
			return s.errorf("delete", p, err)
		}
	}
	return nil
}
