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
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
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
