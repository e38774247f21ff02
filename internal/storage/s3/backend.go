package s3

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

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
