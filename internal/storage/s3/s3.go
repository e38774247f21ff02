// Package s3 implements storage.Store on a key prefix of an S3 bucket (AWS
// or any S3-compatible server) with minio-go, through package objstore.
//
// Writes: Put is one atomic PutObject; objects above minio-go's part size
// (16 MiB) go up as a multipart upload, invisible until completed and
// aborted on failure. The body is streamed once, so a failed Put is not
// retried (reads, listings and deletes are, by minio-go).
//
// Every upload request signs its body's SHA-256 (X-Amz-Content-Sha256), so
// the server refuses a body cut short or changed: not minio-go's streaming
// signature over http, whose "Content-Encoding: aws-chunked" versitygw keeps
// with the object, nor UNSIGNED-PAYLOAD, with which it stores a body cut
// short. The digest is the caller's (storage.PutOptions.SHA256), else the
// body is hashed in memory (at most the part size, as every part of a
// multipart upload is) or, for a PutIfVersion, in a first pass.
//
// PutIfVersion writes are a single conditional PutObject (never a
// multipart upload, so at most 5 GiB), enforced by the server: the zero
// Version sends "If-None-Match: *", another "If-Match: <etag>"; the
// server's 412 (409 for a concurrent conditional write, 404 for an
// If-Match on a missing key) becomes storage.ErrPrecondition. Conditional
// writes are never retried, so a lost response cannot turn a won race
// into a reported conflict. Versions are the objects' ETags.
//
// Credentials come from the standard AWS chain (see newCredentials), never
// from configuration; String and errors show only "s3://bucket/prefix".
package s3

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// Options configure a Store; the environment comes only through Getenv.
type Options struct {
	Bucket string
	// Prefix is the destination root: a key prefix without leading or
	// trailing "/", possibly "" (the whole bucket).
	Prefix string
	// Region is the bucket's region; "" lets the client ask the server
	// (GetBucketLocation).
	Region string
	// Endpoint is the server's URL, e.g. "http://127.0.0.1:9000"; "" means
	// https://s3.amazonaws.com. Without a scheme, https is assumed.
	Endpoint string
	// PathStyle selects path-style requests (https://host/bucket/key), which
	// most S3-compatible servers need, over https://bucket.host/key.
	PathStyle bool
	// Getenv reads the credential variables (AWS_ACCESS_KEY_ID, ...); nil: none.
	Getenv func(string) string
	// Transport is the HTTP transport; nil means minio-go's default. The
	// timeouts below go into a clone of it or of an *http.Transport; any
	// other RoundTripper is used as is, bound only by the calls' contexts.
	// No configuration sets it: it is the tests' HTTP seam (docs/design.md,
	// "S3 Options.Transport").
	Transport http.RoundTripper
	// DialTimeout, ResponseTimeout and IdleTimeout are package deadline's
	// (see deadline.Timeouts); 0 means 10, 30 and 30 seconds. A Put whose
	// reader yields nothing for IdleTimeout fails too; pauses between the
	// Reads of an object opened with Open do not count.
	DialTimeout     time.Duration
	ResponseTimeout time.Duration
	IdleTimeout     time.Duration
	// MaxAttempts is how many times minio-go sends a request that failed
	// in a way it deems transient (a network error, a timeout, a 5xx or
	// throttling answer), with a short backoff in between (at most 1s);
	// 0 means 3, 1 disables retries. Conditional writes and single-request
	// uploads (a streamed body cannot be sent again) are sent once
	// whatever it says; the parts of a multipart upload are retried.
	MaxAttempts int
	// SkipCheck leaves out New's listing request that checks endpoint,
	// bucket, credentials and s3:ListBucket: the caller's first request
	// then fails with the same explanation, one request fewer per run.
	SkipCheck bool
}

// Backend describes the s3 backend to the configuration and the commands
// (see storage.Backend): a destination's s3 block decodes into an
// *Options holding the block's fields, which ForRoot completes.
func Backend() storage.Backend {
	return objstore.Backend(storage.Backend{
		Name:    "s3",
		Title:   "S3",
		Summary: "S3-compatible object storage",
		Fields:  storage.BlockFields(Block{}),
		Needs:   "bucket",
		Schema:  schema,
		Decode:  decode,
		Open: func(ctx context.Context, settings any, root string, env func(string) string) (storage.Store, error) {
			o, ok := settings.(*Options)
			if !ok {
				return nil, fmt.Errorf("s3: no s3 block (settings %T)", settings)
			}
			return New(ctx, o.ForRoot(root, env))
		},
		Location: func(settings any) string {
			if o, _ := settings.(*Options); o != nil {
				return fmt.Sprintf("s3://%s/%s", o.Endpoint, o.Bucket)
			}
			return "s3://"
		},
	})
}

// ForRoot returns the options of a destination's store at the key prefix
// root, with credentials from the AWS chain through getenv.
func (o Options) ForRoot(root string, getenv func(string) string) Options {
	// One retry layer, not two stacked: the commands wrap the store in
	// retry.Store (the backend is Remote), so minio-go sends each request
	// once. Every command's first request (a run's: the catalog read)
	// checks endpoint, bucket and credentials before anything is planned
	// or written: no separate listing request for it (SkipCheck).
	o.Prefix, o.Getenv, o.MaxAttempts, o.SkipCheck = root, getenv, 1, true
	return o
}

// Block is the s3 block (see storage.DecodeBlock and schema.json).
type Block struct {
	Bucket          string        `block:"bucket,required" pattern:"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$" invalid:"bucket name: use 3 to 63 characters of a-z, 0-9, \".\" and \"-\", starting and ending with a letter or digit"`
	Region          string        `block:"region" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" invalid:"region name"`
	Endpoint        string        `block:"endpoint,url" creds:"the AWS credential chain"`
	PathStyle       bool          `block:"path_style"`
	DialTimeout     time.Duration `block:"dial_timeout"`
	ResponseTimeout time.Duration `block:"response_timeout"`
	IdleTimeout     time.Duration `block:"idle_timeout"`
}

// decode reads an s3 block; a bucket name must not have ".." nor be an IP
// address either, which its pattern cannot say.
func decode(b storage.Block) any {
	k := &Block{}
	storage.DecodeBlock(b, k, func(_ storage.Block, name string) bool {
		return name != "bucket" || !strings.Contains(k.Bucket, "..") && net.ParseIP(k.Bucket) == nil
	})
	return &Options{Bucket: k.Bucket, Region: k.Region, Endpoint: k.Endpoint, PathStyle: k.PathStyle,
		DialTimeout: k.DialTimeout, ResponseTimeout: k.ResponseTimeout, IdleTimeout: k.IdleTimeout}
}

//go:embed schema.json
var schema string

// MaxPutIfSize is the largest PutIfVersion Put: S3's single PUT, 5 GiB.
const MaxPutIfSize = 5 << 30

// Store is a storage.Store on a key prefix of an S3 bucket, safe for
// concurrent use.
type Store struct {
	*objstore.Store
	client *minio.Client
	bucket string
}

// New checks opts, sets up the client and, unless opts.SkipCheck, lists
// one key of the root (see objstore.Store.Start).
func New(ctx context.Context, opts Options) (*Store, error) {
	s := &Store{bucket: opts.Bucket}
	s.Store = objstore.New(api{s}, objstore.Config{URL: "s3://" + opts.Bucket, Prefix: opts.Prefix,
		MaxPage: 999, MaxPutIf: MaxPutIfSize, PutIfLimit: "one PUT, at most 5 GiB", VersionName: "ETag", SweepOp: "abort incomplete uploads",
		Unanswered: func(err error) bool { _, _, ok := response(err); return !ok }})
	if err := s.Start(ctx, "bucket "+opts.Bucket, opts.SkipCheck, func() error { return s.init(opts) }); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) init(opts Options) error {
	if s.bucket == "" {
		return errors.New("bucket is required")
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
		MaxRetries:   cmp.Or(max(opts.MaxAttempts, 0), objstore.DefaultMaxAttempts),
	})
	return err
}

// api is the store's objstore.Client.
type api struct{ s *Store }

// partSize is minio-go's: a PutReplace or PutCreate above it goes up in
// parts (of at least this size).
const partSize = 16 << 20

// Put sends one PutObject with the package documentation's condition; a
// PutCreate sends If-None-Match: * too. A PutCreate above the part size goes
// up in parts, and not every server checks the condition on completing them;
// a PutIfVersion is never a multipart upload, so the server checks it.
func (a api) Put(ctx context.Context, key string, w objstore.Write) (storage.Version, error) {
	md := w.Metadata
	opts := minio.PutObjectOptions{ContentType: md.ContentType, CacheControl: md.CacheControl,
		ContentDisposition: md.ContentDisposition, ContentEncoding: md.ContentEncoding, DisableContentSha256: true}
	switch {
	case w.Mode == storage.PutCreate, w.Mode == storage.PutIfVersion && w.IfVersion == "":
		opts.SetMatchETagExcept("*")
	case w.Mode == storage.PutIfVersion:
		opts.SetMatchETag(string(w.IfVersion))
	}
	if w.Mode != storage.PutIfVersion && w.Size > partSize {
		return "", putError(a.putParts(ctx, key, w, opts), w)
	}
	var body io.Reader = w.Body
	sum, _ := strings.CutPrefix(w.SHA256, "sha256:")
	if sum == "" {
		var err error
		if body, sum, err = readPart(w.Body, make([]byte, w.Size)); err != nil {
			return "", err
		}
	}
	if w.ExpectContinue {
		ctx = context.WithValue(ctx, expectContinueKey{}, true)
	}
	// A body that cannot seek is never sent twice by the client.
	info, err := (minio.Core{Client: a.s.client}).PutObject(ctx, a.s.bucket, key, struct{ io.Reader }{body}, w.Size, "", sum, opts)
	if err != nil {
		return "", putError(err, w)
	}
	return storage.Version(info.ETag), nil
}

// putParts sends w as a multipart upload whose parts are each read into
// one buffer and signed with their SHA-256 (the client may send a part
// again), and aborts it if it fails.
func (a api) putParts(ctx context.Context, key string, w objstore.Write, opts minio.PutObjectOptions) (err error) {
	_, size, _, err := minio.OptimalPartInfo(w.Size, partSize)
	if err != nil {
		return err
	}
	c := minio.Core{Client: a.s.client}
	id, err := c.NewMultipartUpload(ctx, a.s.bucket, key, opts)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			c.AbortMultipartUpload(context.WithoutCancel(ctx), a.s.bucket, key, id)
		}
	}()
	buf := make([]byte, size)
	var parts []minio.CompletePart
	for left := w.Size; left > 0; left -= size {
		n := min(left, size)
		part, sum, err := readPart(w.Body, buf[:n])
		if err != nil {
			return err
		}
		p, err := c.PutObjectPart(ctx, a.s.bucket, key, id, len(parts)+1, part, n,
			minio.PutObjectPartOptions{Sha256Hex: sum, DisableContentSha256: true})
		if err != nil {
			return err
		}
		parts = append(parts, minio.CompletePart{PartNumber: p.PartNumber, ETag: p.ETag})
	}
	_, err = c.CompleteMultipartUpload(ctx, a.s.bucket, key, id, parts, minio.PutObjectOptions{})
	return err
}

// readPart fills buf from r and returns its bytes to send and their hex
// SHA-256.
func readPart(r io.Reader, buf []byte) (*bytes.Reader, string, error) {
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(buf)
	return bytes.NewReader(buf), hex.EncodeToString(sum[:]), nil
}

// putError is a failed PutObject's: a refused condition is ErrPrecondition.
func putError(err error, w objstore.Write) error {
	resp := minio.ToErrorResponse(err)
	failed := resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed"
	conflict := resp.StatusCode == http.StatusConflict || resp.Code == "ConditionalRequestConflict"
	switch {
	case w.Mode == storage.PutCreate && (failed || conflict):
		return fmt.Errorf("%w: an object exists: %w", storage.ErrPrecondition, explain(err))
	case w.Mode != storage.PutIfVersion:
	case failed && w.IfVersion == "":
		return fmt.Errorf("%w: object exists", storage.ErrPrecondition)
	case failed:
		return fmt.Errorf("%w: version is not %s", storage.ErrPrecondition, w.IfVersion)
	case conflict:
		return fmt.Errorf("%w: a concurrent conditional write: %w", storage.ErrPrecondition, explain(err))
	case w.IfVersion != "" && (resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound && resp.Code != "NoSuchBucket"):
		return fmt.Errorf("%w: object is absent, want version %s", storage.ErrPrecondition, w.IfVersion)
	}
	return explain(err)
}

// Open starts one GET of key; the response's ETag is the Version.
func (a api) Open(ctx context.Context, key string) (io.ReadCloser, storage.Version, error) {
	body, info, _, err := (minio.Core{Client: a.s.client}).GetObject(ctx, a.s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, "", explain(err)
	}
	return body, storage.Version(info.ETag), nil
}

func (a api) Head(ctx context.Context, key string) (objstore.Object, error) {
	info, err := a.s.client.StatObject(ctx, a.s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return objstore.Object{}, explain(err)
	}
	return objstore.Object{Key: key, Size: info.Size, ModTime: info.LastModified, Version: storage.Version(info.ETag)}, nil
}

func (a api) Delete(ctx context.Context, key string) error {
	return explain(a.s.client.RemoveObject(ctx, a.s.bucket, key, minio.RemoveObjectOptions{}))
}

// List sends ListObjectsV2 requests (recursive, paginated by the client).
// With max > 0 it is one request for max keys: the iterator asks for the
// next page only if it is consumed past this one, and it is not.
func (a api) List(ctx context.Context, prefix string, max int, fn func(objstore.Object)) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the client's listing
	opts := minio.ListObjectsOptions{Prefix: prefix, Recursive: true}
	if max > 0 {
		opts.MaxKeys, opts.FetchOwner = max, new(false)
	}
	n := 0
	for obj := range a.s.client.ListObjectsIter(ctx, a.s.bucket, opts) {
		if obj.Err != nil {
			return false, explain(obj.Err)
		}
		fn(objstore.Object{Key: obj.Key, Size: obj.Size, ModTime: obj.LastModified, Version: storage.Version(obj.ETag)})
		if n++; n == max {
			return false, nil
		}
	}
	return false, ctx.Err()
}

// Uploads lists the incomplete multipart uploads whose keys start with
// prefix: a process that died while uploading a large object leaves them
// behind (S3 keeps and bills their parts, unseen by listings).
func (a api) Uploads(ctx context.Context, prefix string) ([]objstore.Upload, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the client's listing goroutine
	var uploads []objstore.Upload
	for u := range a.s.client.ListIncompleteUploads(ctx, a.s.bucket, prefix, true) {
		if u.Err != nil {
			// The listing looks at each upload's parts; an upload that went
			// away meanwhile (finished or aborted) is what a sweep wants.
			if minio.ToErrorResponse(u.Err).Code == "NoSuchUpload" {
				continue
			}
			return nil, explain(u.Err)
		}
		uploads = append(uploads, objstore.Upload{Key: u.Key, ID: u.UploadID}) // the parts' size is not listed
	}
	return uploads, ctx.Err()
}

func (a api) Abort(ctx context.Context, u objstore.Upload) error {
	if err := (minio.Core{Client: a.s.client}).AbortMultipartUpload(ctx, a.s.bucket, u.Key, u.ID); err != nil && minio.ToErrorResponse(err).Code != "NoSuchUpload" {
		return explain(err)
	}
	return nil
}

// newTransport returns the transport with opts's timeouts (Options.Transport).
func newTransport(opts *Options, secure bool) (http.RoundTripper, error) {
	base, ok := opts.Transport.(*http.Transport)
	switch {
	case opts.Transport == nil:
		def, err := minio.DefaultTransport(secure)
		if err != nil {
			return nil, err
		}
		def.DialContext = nil // deadline's, with a keep-alive
		base = def
	case !ok:
		return opts.Transport, nil
	}
	return objstore.Transport(base, opts.DialTimeout, opts.ResponseTimeout, opts.IdleTimeout), nil
}

// expectContinueKey marks the context of a conditional PUT whose request
// asks the server to confirm the condition first (see
// objstore.Write.ExpectContinue).
type expectContinueKey struct{}

// expectTransport adds "Expect: 100-continue" to the PUT requests (with a
// body) whose context expectContinueKey marks. The header is not signed, so
// it can be added after minio-go signed the request.
type expectTransport struct{ http.RoundTripper }

func (t expectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPut && req.Body != nil && req.Body != http.NoBody &&
		req.Context().Value(expectContinueKey{}) != nil {
		req = req.Clone(req.Context())
		req.Header.Set("Expect", "100-continue")
	}
	return t.RoundTripper.RoundTrip(req)
}

func parseEndpoint(endpoint string) (string, bool, error) {
	if endpoint == "" {
		return "s3.amazonaws.com", true, nil
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	u, err := objstore.ParseEndpoint(endpoint, false, "only scheme, host and port")
	if err != nil {
		return "", false, err
	}
	return u.Host, u.Scheme == "https", nil
}

// newCredentials returns the standard AWS credential chain, reading the
// environment only through getenv:
//
//  1. AWS_ACCESS_KEY_ID (or AWS_ACCESS_KEY), AWS_SECRET_ACCESS_KEY (or
//     AWS_SECRET_KEY) and the optional AWS_SESSION_TOKEN;
//  2. the shared credentials file, AWS_SHARED_CREDENTIALS_FILE or
//     ~/.aws/credentials, profile AWS_PROFILE or "default";
//  3. the instance, container or EKS role (IAM). minio-go's IAM provider
//     also consults the process environment for its container and web
//     identity variables.
//
// The first provider that yields credentials wins. Nothing here formats
// or logs the secrets.
func newCredentials(getenv func(string) string) *credentials.Credentials {
	getenv = objstore.Getenv(getenv)
	providers := []credentials.Provider{&credentials.Static{Value: credentials.Value{ // anonymous, skipped, unless both are set
		AccessKeyID:     cmp.Or(getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_ACCESS_KEY")),
		SecretAccessKey: cmp.Or(getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SECRET_KEY")),
		SessionToken:    getenv("AWS_SESSION_TOKEN"), SignerType: credentials.SignatureV4}}}
	file := getenv("AWS_SHARED_CREDENTIALS_FILE")
	if home := getenv("HOME"); file == "" && home != "" {
		file = filepath.Join(home, ".aws", "credentials")
	}
	if file != "" {
		providers = append(providers, &credentials.FileAWSCredentials{Filename: file, Profile: cmp.Or(getenv("AWS_PROFILE"), "default")})
	}
	iam := &credentials.IAM{Region: cmp.Or(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))}
	iam.Container.AuthorizationToken = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
	iam.Container.AuthorizationTokenFile = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
	iam.Container.CredentialsRelativeURI = getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
	iam.Container.CredentialsFullURI = getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
	iam.EKSIdentity.TokenFile = getenv("AWS_WEB_IDENTITY_TOKEN_FILE")
	iam.EKSIdentity.RoleARN = getenv("AWS_ROLE_ARN")
	iam.EKSIdentity.RoleSessionName = getenv("AWS_ROLE_SESSION_NAME")
	providers = append(providers, iam)
	return credentials.NewChainCredentials(providers)
}

// explain turns a minio-go error response into an *objstore.ResponseError
// (NoSuchKey matches storage.ErrNotExist); other errors stay as they are.
func explain(err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "" && resp.StatusCode == 0 {
		return err
	}
	e := &objstore.ResponseError{Status: resp.StatusCode, Code: resp.Code, Text: resp.Code}
	if resp.Message != "" {
		e.Text += ": " + resp.Message
	}
	switch {
	case resp.Code == "NoSuchKey":
		e.Means = storage.ErrNotExist
	case resp.Code == "NoSuchBucket":
		e.Hint = "the bucket does not exist"
	case resp.StatusCode == http.StatusForbidden || credentialCodes[resp.Code]:
		e.Hint = "check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, the shared credentials file or the instance role) and their permissions (see docs/backends.md)"
	}
	return e
}

// credentialCodes are the error codes of rejected credentials (the last
// is versitygw's for an unknown access key).
var credentialCodes = map[string]bool{
	"AccessDenied": true, "InvalidAccessKeyId": true, "SignatureDoesNotMatch": true,
	"InvalidToken": true, "ExpiredToken": true, "TokenRefreshRequired": true, "XAdminUserNotFound": true,
}

// IsTransient implements storage.Store. Transient, besides storage.IsTransient:
// an S3 error with status 408, 429, 499, 500, 502-504 or 520 or a code of
// retryCodes, and a connection closed before the answer (minioEOF).
func (s *Store) IsTransient(err error) bool {
	if err == nil || storage.IsPermanent(err) {
		return false
	}
	if status, code, ok := response(err); ok {
		// Besides objstore's: nginx's "client closed request" and
		// Cloudflare's "unknown origin error", which proxies send.
		return retryCodes[code] || objstore.TransientStatus(status) || status == 499 || status == 520
	}
	if ue, is := errors.AsType[*url.Error](err); is && ue.Err != nil && strings.HasPrefix(ue.Err.Error(), minioEOF) {
		return true
	}
	return storage.IsTransient(err)
}

// minioEOF starts the error minio-go puts in a *url.Error instead of one
// mentioning EOF: the connection closed before the answer came.
const minioEOF = "Connection closed by foreign host"

// response returns the status and code of an S3 error (explain's or minio-go's).
func response(err error) (status int, code string, ok bool) {
	if se, is := errors.AsType[*objstore.ResponseError](err); is {
		return se.Status, se.Code, true
	}
	if resp, is := errors.AsType[minio.ErrorResponse](err); is && (resp.StatusCode != 0 || resp.Code != "") {
		return resp.StatusCode, resp.Code, true
	}
	if resp, is := errors.AsType[*minio.ErrorResponse](err); is && resp != nil && (resp.StatusCode != 0 || resp.Code != "") {
		return resp.StatusCode, resp.Code, true
	}
	return 0, "", false
}

// retryCodes are the S3 error codes that ask the client to try again.
var retryCodes = map[string]bool{
	"RequestTimeout": true, "SlowDown": true, "SlowDownRead": true, "SlowDownWrite": true,
	"InternalError": true, "ServiceUnavailable": true, "Throttling": true, "ThrottlingException": true,
	"RequestThrottled": true, "RequestLimitExceeded": true,
}
