package azure

import (
	"context"
	"fmt"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// Settings are the decoded `azure` block of a destination.
type Settings struct {
	Account   string
	Container string
	Endpoint  string
	// DialTimeout, ResponseTimeout and IdleTimeout are the Options of
	// the same names (0: the default).
	DialTimeout     time.Duration
	ResponseTimeout time.Duration
	IdleTimeout     time.Duration
}

// Backend describes the azure backend to the configuration and the
// commands (see storage.Backend): `backend: azure` with an `azure` block,
// decoded into Settings.
func Backend() storage.Backend { return backend }

var backend = storage.Backend{
	Name:       "azure",
	Title:      "Azure Blob Storage",
	Summary:    "a container in Azure Blob Storage",
	Jobs:       8,
	Remote:     true,
	Fields:     []string{"account", "container", "endpoint", "dial_timeout", "response_timeout", "idle_timeout"},
	Needs:      "account and container",
	Path:       storage.PathKey,
	Properties: objstore.Properties,
	Schema:     schema,
	Decode:     decode,
	Open:       open,
	Location:   location,
}

// decode reads the block into Settings, checking the names as New does.
func decode(b storage.Block) any {
	var s Settings
	s.Account, _ = b.String("account", true)
	s.Container, _ = b.String("container", true)
	s.Endpoint = objstore.DecodeEndpoint(b, "the environment: see docs/backends.md", " (a SAS goes in AZURE_STORAGE_SAS_TOKEN)")
	s.DialTimeout, s.ResponseTimeout, s.IdleTimeout = objstore.DecodeTimeouts(b)
	if s.Account != "" {
		if err := checkAccount(s.Account); err != nil {
			b.Errorf("account", "%v", err)
		}
	}
	if s.Container != "" {
		if err := checkContainer(s.Container); err != nil {
			b.Errorf("container", "%v", err)
		}
	}
	return s
}

// open opens the store of a destination whose root is the blob-name
// prefix root. It sends no request: a command's first request (a run's:
// the catalog read) checks the endpoint, container and credential, with
// the same explanation. The SDK sends each request once: the retry
// wrapper above the store is the one retry layer.
func open(ctx context.Context, settings any, root string, env func(string) string) (storage.Store, error) {
	s, ok := settings.(Settings)
	if !ok {
		return nil, fmt.Errorf("azure: settings of type %T", settings)
	}
	return New(ctx, Options{Account: s.Account, Container: s.Container, Prefix: root, Endpoint: s.Endpoint, Getenv: env,
		DialTimeout: s.DialTimeout, ResponseTimeout: s.ResponseTimeout, IdleTimeout: s.IdleTimeout,
		MaxAttempts: 1, SkipCheck: true})
}

// location names the container for the overlap check: the Blob service
// URL and the container.
func location(settings any) string {
	s, _ := settings.(Settings)
	u, err := serviceURL(s.Account, s.Endpoint)
	if err != nil {
		u = s.Endpoint
	}
	return "azure:" + u + "/" + s.Container
}

// schema is the JSON Schema of the `azure` block.
const schema = `{
  "description": "The azure backend: a container of an Azure storage account. Credentials, first found: AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY (the account's shared key), AZURE_STORAGE_SAS_TOKEN, else Microsoft Entra ID (environment, workload or managed identity, Azure CLI).",
  "type": "object",
  "additionalProperties": false,
  "required": ["account", "container"],
  "properties": {
    "account": {
      "description": "The storage account name: 3 to 24 lowercase letters and digits.",
      "type": "string",
      "pattern": "^[a-z0-9]{3,24}$"
    },
    "container": {
      "description": "The container: 3 to 63 lowercase letters, digits and single hyphens, or $web (the static website) or $root.",
      "type": "string",
      "pattern": "^([a-z0-9][a-z0-9-]{1,61}[a-z0-9]|\\$web|\\$root)$"
    },
    "endpoint": {
      "description": "The Blob service URL (no credentials, query or fragment), e.g. http://127.0.0.1:10000/devstoreaccount1 for Azurite; default https://<account>.blob.core.windows.net.",
      "type": "string",
      "format": "uri",
      "pattern": "^https?://[^\\s/?#@]+(/[^\\s?#]*)?$"
    },
    "dial_timeout": {"type": "string", "minLength": 2, "pattern": "^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$", "examples": ["15s", "1m"], "description": "How long connecting, and then the TLS handshake, may take. Default 10s."},
    "response_timeout": {"type": "string", "minLength": 2, "pattern": "^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$", "examples": ["15s", "1m"], "description": "How long a request may wait for the response headers. Default 30s."},
    "idle_timeout": {"type": "string", "minLength": 2, "pattern": "^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?$", "examples": ["15s", "1m"], "description": "A transfer fails when no byte has moved for this long, however long it runs while data flows. Default 30s."}
  }
}`
