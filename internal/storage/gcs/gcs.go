// Package gcs implements storage.Store on an object-name prefix of a
// Google Cloud Storage bucket, with a small JSON API client (net/http and
// x/oauth2/google) through package objstore: cloud.google.com/go/storage
// would more than double the binary and slow every start-up (docs/design.md,
// "GCS client").
//
// Writes: every write is one multipart upload request (metadata and bytes
// in one body of known length), which GCS applies atomically and which
// leaves nothing behind. Versions are generations: PutCreate and the zero
// Version send ifGenerationMatch=0 (create only if absent), another
// ifGenerationMatch=<generation>; the server's 412 is storage.ErrPrecondition.
//
// Requests are sent once: retrying is the caller's decision (IsTransient
// tells which failures are worth it). Deadlines are package deadline's
// (see the Options timeouts), also for the token requests of credentials
// from a file (the metadata server's client has its own: 2s to connect,
// 5s a request).
//
// Credentials are Application Default Credentials, in Google's order:
// GOOGLE_APPLICATION_CREDENTIALS's file; gcloud's
// application_default_credentials.json (CLOUDSDK_CONFIG, else
// ~/.config/gcloud, %APPDATA%\gcloud on Windows); the metadata server.
// With STORAGE_EMULATOR_HOST set (host:port or a URL) the store talks to
// that emulator without credentials, as Google's libraries do, and
// Options.Anonymous sends none. String and errors show only "gs://bucket/prefix".
package gcs

import (
	"cmp"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// Options configure a Store; the environment comes only through Getenv.
type Options struct {
	Bucket string
	// Prefix is the destination root: an object-name prefix without
	// leading or trailing "/", possibly "" (the whole bucket).
	Prefix string
	// Endpoint is the JSON API's base URL ("/storage/v1/" if without a
	// path); "" means STORAGE_EMULATOR_HOST's emulator if set, else Google's.
	// Uploads go to the same host under "/upload" + the path.
	Endpoint string
	// Anonymous sends no credentials (emulators, public test buckets).
	Anonymous bool
	// Getenv reads the environment (GOOGLE_APPLICATION_CREDENTIALS, ...); nil: none.
	Getenv func(string) string
	// DialTimeout, ResponseTimeout and IdleTimeout are package deadline's
	// (see deadline.Timeouts); 0 means 10, 30 and 30 seconds.
	DialTimeout     time.Duration
	ResponseTimeout time.Duration
	IdleTimeout     time.Duration
	// SkipCheck leaves out New's listing request that checks endpoint,
	// bucket, credentials and list permission; the first request does.
	SkipCheck bool
}

// Backend describes the gcs backend (see storage.Backend); a `gcs` block
// decodes into an *Options whose Prefix and Getenv Open sets.
func Backend() storage.Backend { return backend }

var backend = objstore.Backend(storage.Backend{
	Name:    "gcs",
	Title:   "GCS",
	Summary: "a Google Cloud Storage bucket",
	Fields:  storage.BlockFields(Block{}),
	Needs:   "bucket",
	Schema:  schema,
	Decode:  decode,
	Open: func(ctx context.Context, settings any, root string, env func(string) string) (storage.Store, error) {
		o, ok := settings.(*Options)
		if !ok {
			return nil, fmt.Errorf("gcs: no gcs block (settings %T)", settings)
		}
		opts := *o
		opts.Prefix, opts.Getenv = root, env
		// Every command's first request (a run's: the catalog read) checks
		// endpoint, bucket and credentials: no separate request for it.
		opts.SkipCheck = true
		return New(ctx, opts)
	},
	Location: func(settings any) string {
		if o, _ := settings.(*Options); o != nil {
			return "gs://" + o.Bucket + " at " + strings.TrimSuffix(cmp.Or(o.Endpoint, defaultEndpoint), "/")
		}
		return "gs://"
	},
})

// Block is the gcs block (see storage.DecodeBlock and schema.json).
type Block struct {
	Bucket          string        `block:"bucket,required" pattern:"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$" invalid:"bucket name: use 3 to 63 characters of a-z, 0-9, \"-\", \"_\" and \".\" (up to 222 with dots), starting and ending with a letter or digit"`
	Endpoint        string        `block:"endpoint,url" creds:"Application Default Credentials"`
	Anonymous       bool          `block:"anonymous"`
	DialTimeout     time.Duration `block:"dial_timeout"`
	ResponseTimeout time.Duration `block:"response_timeout"`
	IdleTimeout     time.Duration `block:"idle_timeout"`
}

func decode(b storage.Block) any {
	k := &Block{}
	storage.DecodeBlock(b, k, k.check)
	return &Options{Bucket: k.Bucket, Endpoint: k.Endpoint, Anonymous: k.Anonymous,
		DialTimeout: k.DialTimeout, ResponseTimeout: k.ResponseTimeout, IdleTimeout: k.IdleTimeout}
}

// check checks what the patterns cannot: bucket name parts of 1 to 63
// characters, an endpoint New can use.
func (k *Block) check(b storage.Block, name string) bool {
	switch name {
	case "bucket":
		return !slices.ContainsFunc(strings.Split(k.Bucket, "."), func(p string) bool { return p == "" || len(p) > 63 })
	case "endpoint":
		if _, _, err := parseEndpoint(k.Endpoint); err != nil {
			b.Errorf("endpoint", "%v", err)
			return false
		}
	}
	return true
}

//go:embed schema.json
var schema string

const defaultEndpoint = "https://storage.googleapis.com/storage/v1/"

// scope is the OAuth scope of the requests: objects read and written.
const scope = "https://www.googleapis.com/auth/devstorage.read_write"

// Store is a storage.Store on an object-name prefix of a GCS bucket, safe
// for concurrent use.
type Store struct {
	*objstore.Store
	client    *http.Client
	transport http.RoundTripper // below the credentials
	objects   string            // the objects' URL: <endpoint>b/<bucket>/o
	uploads   string            // the uploads' URL: <host>/upload<path>b/<bucket>/o
}

// New checks opts, sets up the client and, unless opts.SkipCheck, lists
// one object of the root (see objstore.Store.Start).
func New(ctx context.Context, opts Options) (*Store, error) {
	s := &Store{}
	s.Store = objstore.New(api{s}, objstore.Config{URL: "gs://" + opts.Bucket, Prefix: opts.Prefix,
		MaxPage: 999, VersionName: "generation", SweepOp: "sweep"})
	if err := s.Start(ctx, "bucket "+opts.Bucket, opts.SkipCheck, func() error { return s.init(opts) }); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) init(opts Options) error {
	if opts.Bucket == "" {
		return errors.New("bucket is required")
	}
	getenv := objstore.Getenv(opts.Getenv)
	endpoint, anonymous := opts.Endpoint, opts.Anonymous
	if host := getenv("STORAGE_EMULATOR_HOST"); host != "" {
		anonymous = true
		if endpoint == "" {
			endpoint = host
			if !strings.Contains(host, "://") {
				endpoint = "http://" + host
			}
		}
	}
	api, upload, err := parseEndpoint(endpoint)
	if err != nil {
		return err
	}
	bucket := "b/" + url.PathEscape(opts.Bucket) + "/o"
	s.objects, s.uploads = api+bucket, upload+bucket
	tr := objstore.Transport(nil, opts.DialTimeout, opts.ResponseTimeout, opts.IdleTimeout)
	s.transport, s.client = tr, &http.Client{Transport: tr}
	if !anonymous {
		ts, err := defaultCredentials(getenv, &http.Client{Transport: tr})
		if err != nil {
			return err
		}
		s.client.Transport = &oauth2.Transport{Source: ts, Base: tr}
	}
	return nil
}

func parseEndpoint(endpoint string) (api, upload string, err error) {
	u, err := objstore.ParseEndpoint(cmp.Or(endpoint, defaultEndpoint), true, "no credentials, query or fragment")
	if err != nil {
		return "", "", err
	}
	p := u.EscapedPath()
	if p == "" || p == "/" {
		p = "/storage/v1"
	}
	p = strings.TrimSuffix(p, "/") + "/"
	root := u.Scheme + "://" + u.Host
	return root + p, root + "/upload" + p, nil
}

// defaultCredentials finds the Application Default Credentials in the
// package documentation's order; token requests go through hc.
func defaultCredentials(getenv func(string) string, hc *http.Client) (oauth2.TokenSource, error) {
	file, adc := getenv("GOOGLE_APPLICATION_CREDENTIALS"), "no gcloud file (neither CLOUDSDK_CONFIG nor HOME is set)"
	if file == "" {
		dir := getenv("CLOUDSDK_CONFIG")
		switch {
		case dir != "":
		case runtime.GOOS == "windows" && getenv("APPDATA") != "":
			dir = filepath.Join(getenv("APPDATA"), "gcloud")
		case getenv("HOME") != "":
			dir = filepath.Join(getenv("HOME"), ".config", "gcloud")
		}
		f := filepath.Join(dir, "application_default_credentials.json")
		if fi, err := os.Stat(f); dir != "" && err == nil && fi.Mode().IsRegular() {
			file = f
		} else if dir != "" {
			adc = "no gcloud file " + f
		}
	}
	if file == "" {
		// The metadata client reads GCE_METADATA_HOST from the process
		// environment: getenv, but in tests.
		return metadataSource{google.ComputeTokenSource("", scope), adc, cmp.Or(getenv("GCE_METADATA_HOST"), "169.254.169.254")}, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	// The file is the user's own: any type Google's libraries accept.
	var f struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("credentials %s: %w", file, err)
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, data, google.CredentialsType(f.Type),
		google.CredentialsParams{Scopes: []string{scope}})
	if err != nil {
		return nil, fmt.Errorf("credentials %s: %w", file, err)
	}
	return creds.TokenSource, nil
}

var errNoCredentials = errors.New("no Google credentials found")

// metadataSource is the metadata server's token source, tried when no
// credentials file was found (adc). Its failure says what was tried and
// how to give credentials: not a network failure to retry or report.
type metadataSource struct {
	oauth2.TokenSource
	adc, host string
}

func (m metadataSource) Token() (*oauth2.Token, error) {
	tok, err := m.TokenSource.Token()
	if err == nil {
		return tok, nil
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return nil, fmt.Errorf("%w (tried GOOGLE_APPLICATION_CREDENTIALS: not set; %s; the metadata server %s: %s): set GOOGLE_APPLICATION_CREDENTIALS "+
		"to a credentials file, run `gcloud auth application-default login`, or set anonymous: true for an emulator",
		errNoCredentials, m.adc, m.host, strings.TrimPrefix(err.Error(), "oauth2/google: "))
}

// Close marks the store closed: later calls fail with an error matching
// os.ErrClosed, and idle connections are closed.
func (s *Store) Close() error {
	s.Store.Close()
	if c, ok := s.transport.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	return nil
}

func (s *Store) objectURL(key string, query url.Values) string {
	u := s.objects + "/" + url.PathEscape(key)
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return u
}

// send sends req once. An answer other than 2xx becomes an
// *objstore.ResponseError (its body read and closed); 404 matches
// storage.ErrNotExist and 412 storage.ErrPrecondition.
func (s *Store) send(req *http.Request) (*http.Response, error) {
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, explainToken(err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Message string
			Errors  []struct{ Reason string }
		}
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &objstore.ResponseError{Status: resp.StatusCode, Means: means[resp.StatusCode]}
	if json.Unmarshal(data, &body) == nil && body.Error.Message != "" {
		e.Text = body.Error.Message
		if len(body.Error.Errors) > 0 {
			if r := body.Error.Errors[0].Reason; r != "" && !strings.EqualFold(r, e.Text) {
				e.Text += " [" + r + "]"
			}
		}
	} else {
		e.Text = strings.TrimSpace(string(data[:min(len(data), 200)]))
	}
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		e.Hint = "check the credentials (Application Default Credentials) and their role on the bucket (see docs/backends.md)"
	}
	return nil, e
}

// call sends a request without a body to u and decodes the answer into v
// (nil: none).
func (s *Store) call(ctx context.Context, method, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	resp, err := s.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if v == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("the server's answer: %w", err)
	}
	return nil
}

// means are the storage errors that answers with these statuses stand for.
var means = map[int]error{http.StatusNotFound: storage.ErrNotExist, http.StatusPreconditionFailed: storage.ErrPrecondition}

// explainToken adds what to do to a failure to get a token, or finds
// metadataSource's, which says it already.
func explainToken(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok && errors.Is(err, errNoCredentials) {
		return ue.Err // no request went out: not a network failure
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) || strings.Contains(err.Error(), "oauth2/google") {
		return fmt.Errorf("%w; no usable Application Default Credentials: set GOOGLE_APPLICATION_CREDENTIALS, "+
			"run `gcloud auth application-default login`, or run on Google Cloud (anonymous: true for an emulator)", err)
	}
	return err
}

// IsTransient implements storage.Store. Transient, besides storage.IsTransient:
// an answer (or a token endpoint's) with status 408, 429, 500 or 502-504.
func (s *Store) IsTransient(err error) bool {
	if err == nil || storage.IsPermanent(err) {
		return false
	}
	if ae, ok := errors.AsType[*objstore.ResponseError](err); ok {
		return objstore.TransientStatus(ae.Status)
	}
	if re, ok := errors.AsType[*oauth2.RetrieveError](err); ok {
		return re.Response != nil && objstore.TransientStatus(re.Response.StatusCode)
	}
	return storage.IsTransient(err)
}

// noGeneration is the ifGenerationMatch of a Version that is not a
// generation (the up-front proof's mismatch is one): a generation no
// object reaches (GCS counts microseconds since 1970), so that the server,
// not this process, refuses the write, and the proof tests the server.
const noGeneration = math.MaxInt64

// api is the store's objstore.Client.
type api struct{ s *Store }

// Put sends w to key in one multipart upload, with the package
// documentation's ifGenerationMatch.
func (a api) Put(ctx context.Context, key string, w objstore.Write) (storage.Version, error) {
	md := w.Metadata
	if strings.ContainsAny(md.ContentType, "\r\n") {
		return "", fmt.Errorf("content type %q: a line break", md.ContentType)
	}
	q := url.Values{"uploadType": {"multipart"}, "fields": {"generation"}}
	switch {
	case w.Mode == storage.PutCreate, w.Mode == storage.PutIfVersion && w.IfVersion == "":
		q.Set("ifGenerationMatch", "0")
	case w.Mode == storage.PutIfVersion:
		q.Set("ifGenerationMatch", strconv.FormatInt(noGeneration, 10))
		if n, err := strconv.ParseInt(string(w.IfVersion), 10, 64); err == nil && n > 0 {
			q.Set("ifGenerationMatch", string(w.IfVersion))
		}
	}
	meta, _ := json.Marshal(struct { // of strings: it cannot fail
		Name               string `json:"name"`
		ContentType        string `json:"contentType"`
		CacheControl       string `json:"cacheControl,omitempty"`
		ContentDisposition string `json:"contentDisposition,omitempty"`
		ContentEncoding    string `json:"contentEncoding,omitempty"`
	}{key, md.ContentType, md.CacheControl, md.ContentDisposition, md.ContentEncoding})
	boundary := rand.Text()
	head := "--" + boundary + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" + string(meta) +
		"\r\n--" + boundary + "\r\nContent-Type: " + md.ContentType + "\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	// The body is no *bytes.Reader or the like: the client cannot rewind
	// it, so it never sends it twice.
	body := io.NopCloser(io.MultiReader(strings.NewReader(head), w.Body, strings.NewReader(tail)))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.s.uploads+"?"+q.Encode(), body)
	if err != nil {
		return "", err
	}
	req.ContentLength = int64(len(head)) + w.Size + int64(len(tail))
	req.Header.Set("Content-Type", "multipart/related; boundary="+boundary)
	resp, err := a.s.send(req)
	refused := w.Mode == storage.PutIfVersion && errors.Is(err, storage.ErrPrecondition)
	switch {
	case refused && w.IfVersion == "":
		return "", fmt.Errorf("%w: object exists", storage.ErrPrecondition)
	case refused:
		return "", fmt.Errorf("%w: the object is absent or its generation is not %s", storage.ErrPrecondition, w.IfVersion)
	case err != nil:
		return "", err
	}
	defer resp.Body.Close()
	var obj struct{ Generation string }
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil {
		return "", fmt.Errorf("the server's answer: %w", err)
	}
	return storage.Version(obj.Generation), nil
}

// Open sends one download of key that accepts gzip: GCS serves an object
// stored with "Content-Encoding: gzip" as stored only then (else it
// decompresses it), and the transport decodes nothing it did not ask for.
func (a api) Open(ctx context.Context, key string) (io.ReadCloser, storage.Version, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.s.objectURL(key, url.Values{"alt": {"media"}}), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := a.s.send(req)
	if err != nil {
		return nil, "", err
	}
	gen := resp.Header.Get("X-Goog-Generation")
	if gen == "" {
		resp.Body.Close()
		return nil, "", errors.New("the server returned no generation (X-Goog-Generation)")
	}
	return resp.Body, storage.Version(gen), nil
}

// object is the part of an object resource the store reads.
type object struct {
	Name       string
	Size       string
	Updated    time.Time
	Generation string
}

func (o object) object() (objstore.Object, error) {
	size, err := strconv.ParseInt(o.Size, 10, 64)
	if err != nil {
		return objstore.Object{}, fmt.Errorf("object %q: size %q: %w", o.Name, o.Size, err)
	}
	return objstore.Object{Key: o.Name, Size: size, ModTime: o.Updated, Version: storage.Version(o.Generation)}, nil
}

func (a api) Head(ctx context.Context, key string) (objstore.Object, error) {
	var o object
	if err := a.s.call(ctx, http.MethodGet, a.s.objectURL(key, url.Values{"fields": {"name,size,updated,generation"}}), &o); err != nil {
		return objstore.Object{}, err
	}
	return o.object()
}

func (a api) Delete(ctx context.Context, key string) error {
	return a.s.call(ctx, http.MethodDelete, a.s.objectURL(key, nil), nil)
}

// List sends listing requests of 1,000 objects each (GCS lists in
// byte-wise order, which the store does not rely on), or one of max.
func (a api) List(ctx context.Context, prefix string, max int, fn func(objstore.Object)) (bool, error) {
	q := url.Values{"prefix": {prefix}, "maxResults": {strconv.Itoa(cmp.Or(max, 1000))},
		"fields": {"items(name,size,updated,generation),nextPageToken"}}
	for {
		var pg struct {
			Items         []object
			NextPageToken string
		}
		if err := a.s.call(ctx, http.MethodGet, a.s.objects+"?"+q.Encode(), &pg); err != nil {
			return false, err
		}
		for _, it := range pg.Items {
			o, err := it.object()
			if err != nil {
				return false, err
			}
			fn(o)
		}
		if pg.NextPageToken == "" || max > 0 {
			return pg.NextPageToken != "", nil
		}
		q.Set("pageToken", pg.NextPageToken)
	}
}

// Uploads finds nothing: every write is one request, which leaves nothing
// behind when it fails.
func (a api) Uploads(context.Context, string) ([]objstore.Upload, error) { return nil, nil }

func (a api) Abort(context.Context, objstore.Upload) error { return nil }
