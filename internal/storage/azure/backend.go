package azure

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// Settings are the azure block (see storage.DecodeBlock and schema.json).
type Settings struct {
	Account         string        `block:"account,required" pattern:"^[a-z0-9]{3,24}$"`
	Container       string        `block:"container,required" pattern:"^([a-z0-9][a-z0-9-]{1,61}[a-z0-9]|\\$web|\\$root)$"`
	Endpoint        string        `block:"endpoint,url" creds:"the environment: see docs/backends.md" query:"a SAS goes in AZURE_STORAGE_SAS_TOKEN"`
	DialTimeout     time.Duration `block:"dial_timeout"`
	ResponseTimeout time.Duration `block:"response_timeout"`
	IdleTimeout     time.Duration `block:"idle_timeout"`
}

// Backend describes the azure backend (see storage.Backend); its `azure`
// block decodes into Settings.
func Backend() storage.Backend { return backend }

var backend = objstore.Backend(storage.Backend{
	Name:    "azure",
	Title:   "Azure Blob Storage",
	Summary: "a container in Azure Blob Storage",
	Fields:  storage.BlockFields(Settings{}),
	Needs:   "account and container",
	Schema:  schema,
	Decode:  decode,
	// Open sends no request: a command's first one (a run's: the catalog
	// read) checks endpoint, container and credential with the same
	// explanation. The SDK sends each request once: the retry wrapper above
	// the store is the one retry layer.
	Open: func(ctx context.Context, settings any, root string, env func(string) string) (storage.Store, error) {
		s, ok := settings.(Settings)
		if !ok {
			return nil, fmt.Errorf("azure: settings of type %T", settings)
		}
		return New(ctx, Options{Account: s.Account, Container: s.Container, Prefix: root, Endpoint: s.Endpoint, Getenv: env,
			DialTimeout: s.DialTimeout, ResponseTimeout: s.ResponseTimeout, IdleTimeout: s.IdleTimeout,
			MaxAttempts: 1, SkipCheck: true})
	},
	Location: func(settings any) string {
		s, _ := settings.(Settings)
		u, err := serviceURL(s.Account, s.Endpoint)
		if err != nil {
			u = s.Endpoint
		}
		return "azure:" + u + "/" + s.Container
	},
})

// decode reads the block, then checks the names with New's messages (a
// container name has no "--" either, which its pattern lets through).
func decode(b storage.Block) any {
	var s Settings
	storage.DecodeBlock(b, &s, nil)
	if err := checkAccount(s.Account); err != nil && s.Account != "" {
		b.Errorf("account", "%v", err)
	}
	if err := checkContainer(s.Container); err != nil && s.Container != "" {
		b.Errorf("container", "%v", err)
	}
	return s
}

//go:embed schema.json
var schema string
