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
// Deadlines are package deadline's (see the Options timeouts). The SDK
// sends a read, listing or delete that failed that way (or with a 408, 429
// or 5xx) up to Options.MaxAttempts times, at most a second apart.
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
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
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
	// or Put Block that failed in a way it deems transient; 0 means 3, 1
	// disables retries. Put Blob and Put Block List are sent once.
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

var _ storage.Store = (*Store)(nil)

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
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = objstore.DefaultMaxAttempts
	}
	tr := objstore.Transport(nil, opts.DialTimeout, opts.ResponseTimeout, opts.IdleTimeout)
	copts := &container.ClientOptions{ClientOptions: policy.ClientOptions{
		Transport: &http.Client{Transport: tr},
		Retry: policy.RetryOptions{MaxRetries: int32(opts.MaxAttempts - 1), RetryDelay: 100 * time.Millisecond,
			MaxRetryDelay: time.Second},
		// No telemetry header naming this program, no request logging.
		Telemetry: policy.TelemetryOptions{Disabled: true},
	}}
	if opts.MaxAttempts == 1 {
		copts.Retry.MaxRetries = -1
	}
	s.client, err = newClient(opts.Account, endpoint, opts.Container, objstore.Getenv(opts.Getenv), copts)
	return err
}

func checkAccount(account string) error {
	if account == "" {
		return errors.New("account is required")
	}
	for _, c := range account {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') || len(account) < 3 || len(account) > 24 {
			return fmt.Errorf("account %q: 3 to 24 lowercase letters and digits", account)
		}
	}
	return nil
}

func checkContainer(cont string) error {
	bad := fmt.Errorf("container %q: 3 to 63 lowercase letters, digits and single hyphens inside, or $web or $root", cont)
	switch {
	case cont == "":
		return errors.New("container is required")
	case cont == "$web", cont == "$root":
		return nil
	case len(cont) < 3 || len(cont) > 63 || cont[0] == '-' || cont[len(cont)-1] == '-' || strings.Contains(cont, "--"):
		return bad
	}
	for _, c := range cont {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return bad
		}
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
