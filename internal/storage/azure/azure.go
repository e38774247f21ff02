// Package azure implements storage.Store on a blob-name prefix of an Azure
// Blob Storage container (Azure, Azurite, Azure Stack) with Microsoft's
// azblob SDK, through package objstore.
//
// Writes: Put is one Put Blob, which Azure applies atomically. Blobs
// larger than Options.BlockSize (16 MiB by default) go up as blocks made
// visible by one atomic Put Block List; a writer that dies in between
// leaves uncommitted blocks, unseen, which Azure discards after a week
// (SweepTemp deletes those of blobs with no committed version).
//
// Conditions are enforced by the server: the zero Version sends
// "If-None-Match: *", another "If-Match: <etag>", on Put Blob or on the Put
// Block List committing a large PutCreate. A 409 BlobAlreadyExists or 412
// (or 404 for an If-Match on a missing blob) is storage.ErrPrecondition. A
// PutIfVersion is one Put Blob (at most MaxPutIfSize). Writes are never
// retried: a lost response must not turn a won race into a reported
// conflict, and a streamed body cannot be sent again. Versions are ETags.
//
// Credentials, first found (see newClient): AZURE_STORAGE_CONNECTION_STRING,
// AZURE_STORAGE_KEY (the shared key of the account), AZURE_STORAGE_SAS_TOKEN,
// else Microsoft Entra ID. String and errors show only
// "azure://account/container/prefix", never a key or a SAS.
package azure

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// Options configure a Store; the environment comes only through Getenv.
type Options struct {
	Account string
	// Container is the container's name, e.g. "$web" for a static website.
	Container string
	// Prefix is the destination root: a blob-name prefix without leading
	// or trailing "/", possibly "" (the whole container).
	Prefix string
	// Endpoint is the Blob service URL, e.g. Azurite's
	// "http://127.0.0.1:10000/devstoreaccount1"; "" means
	// https://<Account>.blob.core.windows.net. A connection string must agree.
	Endpoint string
	// Getenv reads the credential variables (see newClient); nil: none.
	Getenv func(string) string
	// DialTimeout, ResponseTimeout and IdleTimeout are package deadline's
	// (see deadline.Timeouts); 0 means 10, 30 and 30 seconds.
	DialTimeout     time.Duration
	ResponseTimeout time.Duration
	IdleTimeout     time.Duration
	// MaxAttempts is how many times the SDK sends a read, listing, delete
	// or Put Block that failed in a way it deems transient (a deadline, a
	// 408, 429 or 5xx), at most a second apart; 0 means 3, 1 disables
	// retries. Put Blob and Put Block List are sent once.
	MaxAttempts int
	// BlockSize is the largest blob a PutReplace or PutCreate sends as one
	// Put Blob, and the size of the blocks of a larger one; 0 means 16 MiB.
	BlockSize int64
	// SkipCheck leaves out New's listing request that checks endpoint,
	// container, credentials and permissions; the first request does.
	SkipCheck bool
}

const defaultBlockSize = 16 << 20

// MaxPutIfSize is the largest PutIfVersion Put: one Put Blob, 5000 MiB.
const MaxPutIfSize = 5000 << 20

// Store is a storage.Store on a blob-name prefix of an Azure container,
// safe for concurrent use.
type Store struct {
	*objstore.Store
	client    *container.Client
	blockSize int64
}

// New checks opts, sets up the client and, unless opts.SkipCheck, lists
// one blob of the root (see objstore.Store.Start).
func New(ctx context.Context, opts Options) (*Store, error) {
	s := &Store{blockSize: opts.BlockSize}
	if s.blockSize <= 0 {
		s.blockSize = defaultBlockSize
	}
	s.Store = objstore.New(api{s}, objstore.Config{URL: "azure://" + opts.Account + "/" + opts.Container, Prefix: opts.Prefix,
		MaxPage: 4999, MaxPutIf: MaxPutIfSize, PutIfLimit: "one Put Blob, at most 5000 MiB", VersionName: "ETag", SweepOp: "delete uncommitted blobs",
		Unanswered: func(err error) bool { _, _, ok := status(err); return !ok }})
	if err := s.Start(ctx, "container "+opts.Container, opts.SkipCheck, func() error { return s.init(opts) }); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) init(opts Options) error {
	// The names as Azure defines them, so that a typo fails with a
	// message rather than a request.
	if err := cmp.Or(checkAccount(opts.Account), checkContainer(opts.Container)); err != nil {
		return err
	}
	endpoint, err := serviceURL(opts.Account, opts.Endpoint)
	if err != nil {
		return err
	}
	retries := int32(cmp.Or(max(opts.MaxAttempts, 0), objstore.DefaultMaxAttempts) - 1)
	tr := objstore.Transport(nil, opts.DialTimeout, opts.ResponseTimeout, opts.IdleTimeout)
	copts := &container.ClientOptions{ClientOptions: policy.ClientOptions{
		Transport: &http.Client{Transport: tr},
		// MaxRetries 0 is the SDK's default (3), -1 none.
		Retry: policy.RetryOptions{MaxRetries: cmp.Or(retries, -1), RetryDelay: 100 * time.Millisecond, MaxRetryDelay: time.Second},
		// No telemetry header naming this program, no request logging.
		Telemetry: policy.TelemetryOptions{Disabled: true},
	}}
	s.client, err = newClient(opts.Account, endpoint, opts.Container, objstore.Getenv(opts.Getenv), copts)
	return err
}

// lowerDigits are the characters of an account name.
const lowerDigits = "abcdefghijklmnopqrstuvwxyz0123456789"

func checkAccount(account string) error {
	switch {
	case account == "":
		return errors.New("account is required")
	case len(account) < 3 || len(account) > 24 || strings.Trim(account, lowerDigits) != "":
		return fmt.Errorf("account %q: 3 to 24 lowercase letters and digits", account)
	}
	return nil
}

func checkContainer(cont string) error {
	switch {
	case cont == "":
		return errors.New("container is required")
	case cont == "$web", cont == "$root":
		return nil
	case len(cont) < 3 || len(cont) > 63 || cont[0] == '-' || cont[len(cont)-1] == '-' || strings.Contains(cont, "--") ||
		strings.Trim(cont, lowerDigits+"-") != "":
		return fmt.Errorf("container %q: 3 to 63 lowercase letters, digits and single hyphens inside, or $web or $root", cont)
	}
	return nil
}

func serviceURL(account, endpoint string) (string, error) {
	if endpoint == "" {
		return "https://" + account + ".blob.core.windows.net", nil
	}
	if _, err := objstore.ParseEndpoint(endpoint, true, "only scheme, host, port and path (credentials come from the environment)"); err != nil {
		return "", err
	}
	return strings.TrimSuffix(endpoint, "/"), nil
}

// Error codes (x-ms-error-code) the store tells apart.
const (
	codeBlobNotFound      = "BlobNotFound"
	codeBlobAlreadyExists = "BlobAlreadyExists"
	codeContainerNotFound = "ContainerNotFound"
)

// explain turns an SDK error into an *objstore.ResponseError (404
// BlobNotFound matches storage.ErrNotExist) and takes the query (a SAS) out
// of a transport error's URL; other errors stay as they are.
func explain(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		if u, perr := url.Parse(ue.URL); perr == nil && u.RawQuery != "" {
			query := "?" + u.RawQuery
			ue.URL = strings.Replace(ue.URL, query, "?[query removed]", 1)
			if msg := err.Error(); strings.Contains(msg, query) { // formatted before
				return &redacted{msg: strings.ReplaceAll(msg, query, "?[query removed]"), err: err}
			}
		}
	}
	var resp *azcore.ResponseError
	if !errors.As(err, &resp) {
		return err
	}
	e := &objstore.ResponseError{Status: resp.StatusCode, Code: resp.ErrorCode, Text: resp.ErrorCode, Err: resp}
	switch {
	case resp.ErrorCode == codeBlobNotFound || resp.StatusCode == http.StatusNotFound && resp.ErrorCode == "":
		e.Means = storage.ErrNotExist
	case resp.ErrorCode == codeContainerNotFound:
		e.Hint = "the container does not exist"
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		e.Hint = "check the credentials (AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN or " +
			"Microsoft Entra ID) and their role on the container (see docs/backends.md)"
	}
	return e
}

// redacted is an error with its own message over the one it wraps: a URL's
// query taken out, or the lines of Microsoft Entra ID's account joined.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }

func (e *redacted) Unwrap() error { return e.err }

func status(err error) (int, string, bool) {
	var resp *azcore.ResponseError
	if errors.As(err, &resp) {
		return resp.StatusCode, resp.ErrorCode, true
	}
	return 0, "", false
}

// IsTransient implements storage.Store. Transient, besides storage.IsTransient:
// an Azure error with status 408, 429, 500 or 502-504; a credential that
// Microsoft Entra ID refused or could not find is final.
func (s *Store) IsTransient(err error) bool {
	if err == nil || storage.IsPermanent(err) || errors.As(err, new(*azidentity.AuthenticationFailedError)) {
		return false
	}
	if code, _, ok := status(err); ok {
		return objstore.TransientStatus(code)
	}
	return storage.IsTransient(err)
}

const (
	envConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	envKey              = "AZURE_STORAGE_KEY"
	envSAS              = "AZURE_STORAGE_SAS_TOKEN"
)

// newClient returns the client of the container cont of account at the
// Blob service URL endpoint, with the first credential found (spec section 3.2):
//
//  1. AZURE_STORAGE_CONNECTION_STRING, a connection string (naming the
//     destination's container URL, so that the overlap check holds);
//  2. AZURE_STORAGE_KEY, the shared key of the account;
//  3. AZURE_STORAGE_SAS_TOKEN, a shared access signature (with or without
//     its leading "?");
//  4. Microsoft Entra ID through azidentity's DefaultAzureCredential:
//     the environment (AZURE_TENANT_ID, AZURE_CLIENT_ID and a secret or
//     certificate), workload identity, managed identity, the Azure CLI's
//     login. It reads the process environment itself, not getenv, and
//     asks for a token at the first request.
//
// Nothing here formats or logs the secrets.
func newClient(account, endpoint, cont string, getenv func(string) string, opts *container.ClientOptions) (*container.Client, error) {
	containerURL := endpoint + "/" + url.PathEscape(cont)
	if cs := getenv(envConnectionString); cs != "" {
		c, err := container.NewClientFromConnectionString(cs, cont, opts)
		if err != nil {
			// The SDK's message does not quote the string.
			return nil, fmt.Errorf("%s: %w", envConnectionString, err)
		}
		got, _, _ := strings.Cut(c.URL(), "?")
		if got = strings.TrimSuffix(got, "/"); !strings.EqualFold(got, containerURL) {
			return nil, fmt.Errorf("%s names the container %s, the destination %s: set the destination's account and endpoint to match",
				envConnectionString, got, containerURL)
		}
		return c, nil
	}
	if key := getenv(envKey); key != "" {
		cred, err := container.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envKey, err)
		}
		return container.NewClientWithSharedKeyCredential(containerURL, cred, opts)
	}
	if sas := strings.TrimPrefix(getenv(envSAS), "?"); sas != "" {
		if _, err := url.ParseQuery(sas); err != nil {
			return nil, fmt.Errorf("%s is not a query string", envSAS)
		}
		return container.NewClientWithNoCredential(containerURL+"?"+sas, opts)
	}
	tried := "no Azure credential found (tried " + envConnectionString + ", " + envKey + " and " + envSAS + ": not set; Microsoft Entra ID: "
	if strings.HasPrefix(strings.ToLower(endpoint), "http:") {
		return nil, fmt.Errorf("%snot used with an http:// endpoint, whose requests would carry its token unencrypted): set %s "+
			"(Azurite: its account key), %s or %s, or use an https:// endpoint (see docs/backends.md)", tried, envKey, envSAS, envConnectionString)
	}
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: opts.ClientOptions})
	if err != nil {
		return nil, fmt.Errorf("%s%w)", tried, err)
	}
	return container.NewClient(containerURL, entraID{cred, tried}, opts)
}

// entraID is DefaultAzureCredential with its failure on one line, saying
// what was tried when it found no credential.
type entraID struct {
	*azidentity.DefaultAzureCredential
	tried string
}

func (c entraID) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tok, err := c.DefaultAzureCredential.GetToken(ctx, o)
	if err != nil {
		msg := strings.NewReplacer(":\n\t", ": ", "\n\t\t", " ", "\n\t", "; ", "\n", " ").Replace(err.Error())
		if !errors.As(err, new(*azidentity.AuthenticationFailedError)) {
			msg = c.tried + msg + "): set one of them, or sign in to Microsoft Entra ID (see docs/backends.md)"
		}
		err = &redacted{msg: msg, err: err} // wraps the SDK's error: not retried
	}
	return tok, err
}

// api is the store's objstore.Client.
type api struct{ s *Store }

// Open starts one Get Blob of key; the response's ETag is the Version.
func (a api) Open(ctx context.Context, key string) (io.ReadCloser, storage.Version, error) {
	resp, err := a.s.client.NewBlobClient(key).DownloadStream(ctx, nil)
	if err != nil {
		return nil, "", explain(err)
	}
	return &body{resp.Body}, etagVersion(resp.ETag), nil
}

// body is a download's body, its errors explained.
type body struct{ io.ReadCloser }

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = explain(err)
	}
	return n, err
}

func (a api) Head(ctx context.Context, key string) (objstore.Object, error) {
	resp, err := a.s.client.NewBlobClient(key).GetProperties(ctx, nil)
	if err != nil {
		return objstore.Object{}, explain(err)
	}
	return object(key, resp.ContentLength, resp.LastModified, resp.ETag), nil
}

// object is key's objstore.Object; any property may be nil (zero).
func object(key string, size *int64, modTime *time.Time, etag *azcore.ETag) objstore.Object {
	return objstore.Object{Key: key, Size: *cmp.Or(size, new(int64)), ModTime: *cmp.Or(modTime, new(time.Time)),
		Version: etagVersion(etag)}
}

// etagVersion is the Version of a blob with the ETag e ("" for none), in
// the quoted form of the responses' ETag headers (which Put returns and
// If-Match takes) also where a listing gives it unquoted.
func etagVersion(e *azcore.ETag) storage.Version {
	if e == nil || *e == "" {
		return ""
	}
	if s := string(*e); !strings.HasPrefix(s, `"`) && !strings.HasPrefix(s, "W/") {
		return storage.Version(`"` + s + `"`)
	}
	return storage.Version(*e)
}

func (a api) Delete(ctx context.Context, key string) error {
	_, err := a.s.client.NewBlobClient(key).Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: new(blob.DeleteSnapshotsOptionTypeInclude)})
	return explain(err)
}

func (a api) List(ctx context.Context, prefix string, max int, fn func(objstore.Object)) (bool, error) {
	return a.list(ctx, &container.ListBlobsFlatOptions{Prefix: &prefix}, max, fn)
}

func (a api) list(ctx context.Context, opts *container.ListBlobsFlatOptions, max int, fn func(objstore.Object)) (bool, error) {
	if max > 0 {
		opts.MaxResults = new(int32(max))
	}
	pager := a.s.client.NewListBlobsFlatPager(opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return false, explain(err)
		}
		for _, it := range page.Segment.BlobItems {
			if it == nil || it.Name == nil {
				continue
			}
			pr := cmp.Or(it.Properties, &container.BlobProperties{})
			fn(object(*it.Name, pr.ContentLength, pr.LastModified, pr.ETag))
		}
		if max > 0 {
			return page.NextMarker != nil && *page.NextMarker != "", nil
		}
	}
	return false, nil
}

// Uploads lists the uncommitted blobs under prefix: a writer that died
// uploading in blocks leaves them where no committed blob is, unseen and
// billed until Azure discards them after a week (an existing blob's go with
// its next write). They are in a listing that includes them and not in a
// later one that does not (a blob committed in between is in both).
func (a api) Uploads(ctx context.Context, prefix string) ([]objstore.Upload, error) {
	var all []objstore.Upload
	_, err := a.list(ctx, &container.ListBlobsFlatOptions{Prefix: &prefix, Include: container.ListBlobsInclude{UncommittedBlobs: true}},
		0, func(o objstore.Object) { all = append(all, objstore.Upload{Key: o.Key, Size: o.Size}) })
	if err != nil || len(all) == 0 {
		return nil, err
	}
	committed := map[string]bool{}
	if _, err := a.List(ctx, prefix, 0, func(o objstore.Object) { committed[o.Key] = true }); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(u objstore.Upload) bool { return committed[u.Key] }), nil
}

// Abort deletes the uncommitted blob u (not conditioned on the listed
// ETag: Azurite refuses If-Match on an uncommitted blob; the lock's holder
// is the only writer).
func (a api) Abort(ctx context.Context, u objstore.Upload) error {
	_, err := a.s.client.NewBlobClient(u.Key).Delete(ctx, nil)
	if err = explain(err); err != nil && !errors.Is(err, storage.ErrNotExist) {
		return err
	}
	return nil
}

// Put sends one Put Blob, or for a PutReplace or PutCreate above the block
// size, blocks committed by one Put Block List (which evaluates the
// condition). PutIfVersion is always one Put Blob: no leftover blocks.
func (a api) Put(ctx context.Context, key string, w objstore.Write) (storage.Version, error) {
	bb := a.s.client.NewBlockBlobClient(key)
	h, cond := headers(w.Metadata), condition(w)
	if w.Mode != storage.PutIfVersion && w.Size > a.s.blockSize {
		return "", putError(a.s.putBlocks(ctx, bb, w.Body, w.Size, h, cond), w)
	}
	pctx := once(ctx)
	if w.ExpectContinue {
		pctx = policy.WithHTTPHeader(pctx, http.Header{"Expect": {"100-continue"}})
	}
	resp, err := bb.Upload(pctx, &onceBody{er: w.Body, size: w.Size}, &blockblob.UploadOptions{HTTPHeaders: h, AccessConditions: cond})
	if err != nil || resp.ETag == nil {
		return "", putError(err, w)
	}
	return storage.Version(*resp.ETag), nil
}

// putError is a write's error (nil for none): the server's refusal of its
// condition (412, 409 BlobAlreadyExists, or for an If-Match a 404 for a
// missing blob) is ErrPrecondition.
func putError(err error, w objstore.Write) error {
	st, code, _ := status(err)
	refused := st == http.StatusPreconditionFailed || code == codeBlobAlreadyExists
	switch {
	case err == nil:
		return nil
	case w.Mode == storage.PutCreate && refused:
		return fmt.Errorf("%w: a blob exists: %w", storage.ErrPrecondition, explain(err))
	case w.Mode != storage.PutIfVersion:
	case refused && w.IfVersion == "":
		return fmt.Errorf("%w: blob exists", storage.ErrPrecondition)
	case refused || w.IfVersion != "" && (code == codeBlobNotFound || st == http.StatusNotFound && code != codeContainerNotFound):
		return fmt.Errorf("%w: version is not %s", storage.ErrPrecondition, w.IfVersion)
	}
	return explain(err)
}

func once(ctx context.Context) context.Context {
	return policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
}

func condition(w objstore.Write) *blob.AccessConditions {
	var m blob.ModifiedAccessConditions
	switch {
	case w.Mode == storage.PutCreate, w.Mode == storage.PutIfVersion && w.IfVersion == "":
		m.IfNoneMatch = new(azcore.ETagAny)
	case w.Mode == storage.PutIfVersion:
		m.IfMatch = new(azcore.ETag(w.IfVersion))
	default:
		return nil
	}
	return &blob.AccessConditions{ModifiedAccessConditions: &m}
}

// headers are the blob's HTTP headers: m's, those it leaves empty unset.
func headers(m storage.Metadata) *blob.HTTPHeaders {
	return &blob.HTTPHeaders{BlobContentType: new(m.ContentType), BlobCacheControl: set(m.CacheControl),
		BlobContentDisposition: set(m.ContentDisposition), BlobContentEncoding: set(m.ContentEncoding)}
}

// set is the address of v, or nil for "" (no header).
func set(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// putBlocks uploads size bytes of er as blocks of the block size (each
// buffered, so that the SDK may send it again) and commits them with one
// Put Block List carrying h and cond. The block IDs start with a random
// prefix: a concurrent writer of the same blob stages other blocks, and a
// commit names only its own.
func (s *Store) putBlocks(ctx context.Context, bb *blockblob.Client, er *objstore.ExactReader, size int64,
	h *blob.HTTPHeaders, cond *blob.AccessConditions) error {
	var upload [16]byte
	rand.Read(upload[:8])
	buf := make([]byte, s.blockSize)
	var ids []string
	for left := size; left > 0; {
		n := min(left, s.blockSize)
		if _, err := io.ReadFull(er, buf[:n]); err != nil {
			return err
		}
		binary.BigEndian.PutUint64(upload[8:], uint64(len(ids)))
		id := base64.StdEncoding.EncodeToString(upload[:])
		if _, err := bb.StageBlock(ctx, id, streaming.NopCloser(bytes.NewReader(buf[:n])), nil); err != nil {
			return fmt.Errorf("block %d: %w", len(ids), err)
		}
		ids = append(ids, id)
		left -= n
	}
	_, err := bb.CommitBlockList(once(ctx), ids, &blockblob.CommitBlockListOptions{HTTPHeaders: h, AccessConditions: cond})
	return err
}

// onceBody is a request body that the SDK may seek to its end or start (it
// measures the body, and rewinds it before a retry) only before its first
// byte is read: a streamed body is sent once.
type onceBody struct {
	er      *objstore.ExactReader
	size    int64
	pos     int64 // where a seek put it, before reading
	started bool
}

func (b *onceBody) Read(p []byte) (int, error) {
	first := !b.started
	if b.started = true; first && b.pos != 0 {
		return 0, errors.New("body read away from its start")
	}
	return b.er.Read(p)
}

func (b *onceBody) Seek(offset int64, whence int) (int64, error) {
	if b.started {
		return 0, errors.New("the body is streamed: it cannot be sent again")
	}
	switch {
	case offset != 0 || uint(whence) > io.SeekEnd:
		return 0, errors.New("the body seeks to its start or end only")
	case whence == io.SeekStart:
		b.pos = 0
	case whence == io.SeekEnd:
		b.pos = b.size
	}
	return b.pos, nil
}

func (b *onceBody) Close() error { return nil }
