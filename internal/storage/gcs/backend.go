package gcs

import (
	"cmp"
	"context"
	_ "embed"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

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
		opts := *settings.(*Options)
		opts.Prefix, opts.Getenv = root, env
		// Every command's first request (a run's: the catalog read) checks
		// endpoint, bucket and credentials: no separate request for it.
		opts.SkipCheck = true
		return New(ctx, opts)
	},
	Location: func(settings any) string {
		o := settings.(*Options)
		return "gs://" + o.Bucket + " at " + strings.TrimSuffix(cmp.Or(o.Endpoint, defaultEndpoint), "/")
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
