package s3

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// Backend describes the s3 backend to the configuration and the commands
// (see storage.Backend): a destination's s3 block decodes into an
// *Options holding the block's fields, which ForRoot completes.
func Backend() storage.Backend {
	return storage.Backend{
		Name:    "s3",
		Title:   "S3",
		Summary: "S3-compatible object storage",
		Fields: []string{"bucket", "region", "endpoint", "path_style",
			"dial_timeout", "response_timeout", "idle_timeout"},
		Needs:      "bucket",
		Path:       storage.PathKey,
		Jobs:       8,
		Remote:     true,
		Properties: objstore.Properties,
		Schema:     schema,
		Decode:     decodeBlock,
		Open:       openStore,
		Location:   location,
	}
}

// openStore opens the store of the settings' block at the key prefix root.
func openStore(ctx context.Context, settings any, root string, env func(string) string) (storage.Store, error) {
	o, ok := settings.(*Options)
	if !ok {
		return nil, fmt.Errorf("s3: no s3 block (settings %T)", settings)
	}
	return New(ctx, o.ForRoot(root, env))
}

// location is the endpoint and bucket a root is in.
func location(settings any) string {
	o, _ := settings.(*Options)
	if o == nil {
		return "s3://"
	}
	return fmt.Sprintf("s3://%s/%s", o.Endpoint, o.Bucket)
}

// ForRoot returns the options of a destination's store: o as its s3 block
// decoded, at the key prefix root, with credentials from the AWS chain
// through getenv (never from the configuration).
func (o Options) ForRoot(root string, getenv func(string) string) Options {
	o.Prefix, o.Getenv = root, getenv
	// One retry layer, not two stacked: the commands wrap the store in
	// retry.Store (the backend is Remote), so minio-go sends each request
	// once.
	o.MaxAttempts = 1
	// Every command's first request (a run's: the catalog read) checks
	// the endpoint, bucket and credentials, with the same explanation as
	// a check at open would give, before anything is planned or written:
	// no separate listing request for it.
	o.SkipCheck = true
	return o
}

// decodeBlock reads an s3 block.
func decodeBlock(b storage.Block) any {
	o := &Options{}
	if s, ok := b.String("bucket", true); ok {
		if !validBucket(s) {
			b.Errorf("bucket", "%q is not a valid bucket name: use 3 to 63 characters of a-z, 0-9, \".\" and \"-\", starting and ending with a letter or digit", s)
		} else {
			o.Bucket = s
		}
	}
	if s, ok := b.String("region", false); ok && s != "" {
		if !validRegion(s) {
			b.Errorf("region", "%q is not a valid region name", s)
		} else {
			o.Region = s
		}
	}
	o.Endpoint = objstore.DecodeEndpoint(b, "the AWS credential chain", "")
	o.PathStyle = b.Bool("path_style", false)
	o.DialTimeout, o.ResponseTimeout, o.IdleTimeout = objstore.DecodeTimeouts(b)
	return o
}

// validBucket matches the schema's bucket pattern,
// ^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$, without "..", and refuses an IP
// address. It is written out, not compiled: every start of the program
// would pay for a regular expression.
func validBucket(s string) bool {
	if len(s) < 3 || len(s) > 63 || strings.Contains(s, "..") || net.ParseIP(s) != nil {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !ok && (i == 0 || i == len(s)-1 || c != '.' && c != '-') {
			return false
		}
	}
	return true
}

// validRegion matches the schema's region pattern,
// ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$.
func validRegion(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !ok && (i == 0 || c != '_' && c != '.' && c != '-') {
			return false
		}
	}
	return true
}

// schema is the JSON Schema of the s3 block (storage.Backend.Schema).
//
//go:embed schema.json
var schema string
