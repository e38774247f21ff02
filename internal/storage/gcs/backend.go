package gcs

import (
	"cmp"
	"context"
	_ "embed"
	"regexp"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// Backend describes the gcs backend (see storage.Backend): a
// destination's `gcs` block is decoded into an *Options (without Prefix and
// Getenv, which Open sets from the destination's path and the environment).
func Backend() storage.Backend { return backend }

var backend = storage.Backend{
	Name:       "gcs",
	Title:      "GCS",
	Summary:    "a Google Cloud Storage bucket",
	Jobs:       8,
	Remote:     true,
	Fields:     []string{"bucket", "endpoint", "anonymous", "dial_timeout", "response_timeout", "idle_timeout"},
	Needs:      "bucket",
	Path:       storage.PathKey,
	Properties: objstore.Properties,
	Schema:     schema,
	Decode:     decode,
	Open: func(ctx context.Context, settings any, root string, env func(string) string) (storage.Store, error) {
		opts := *settings.(*Options)
		opts.Prefix, opts.Getenv = root, env
		// Every command's first request (a run's: the catalog read) checks
		// the endpoint, bucket and credentials, with the same explanation
		// as a check here would give: no separate request for it.
		opts.SkipCheck = true
		return New(ctx, opts)
	},
	Location: func(settings any) string {
		o := settings.(*Options)
		return "gs://" + o.Bucket + " at " + strings.TrimSuffix(cmp.Or(o.Endpoint, defaultEndpoint), "/")
	},
}

// bucketRE is GCS's rule for bucket names: 3 to 63 characters of a-z,
// 0-9, "-", "_" and "." (up to 222 with dots, each dot-separated part at
// most 63), starting and ending with a letter or digit.
var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$`)

// decode reads a gcs block into an *Options.
func decode(b storage.Block) any {
	o := &Options{}
	if name, ok := b.String("bucket", true); ok {
		if !validBucket(name) {
			b.Errorf("bucket", "%q is not a valid bucket name: use 3 to 63 characters of a-z, 0-9, \"-\", \"_\" and \".\" "+
				"(up to 222 with dots), starting and ending with a letter or digit", name)
		} else {
			o.Bucket = name
		}
	}
	if s := objstore.DecodeEndpoint(b, "Application Default Credentials", ""); s != "" {
		if _, _, err := parseEndpoint(s); err != nil {
			b.Errorf("endpoint", "%v", err)
		} else {
			o.Endpoint = s
		}
	}
	o.Anonymous = b.Bool("anonymous", false)
	o.DialTimeout, o.ResponseTimeout, o.IdleTimeout = objstore.DecodeTimeouts(b)
	return o
}

// validBucket reports whether name follows bucketRE and its length rules.
func validBucket(name string) bool {
	if !bucketRE.MatchString(name) || strings.Contains(name, "..") {
		return false
	}
	if !strings.Contains(name, ".") {
		return len(name) <= 63
	}
	for part := range strings.SplitSeq(name, ".") {
		if part == "" || len(part) > 63 {
			return false
		}
	}
	return true
}

// schema is the JSON Schema of the gcs block (storage.Backend.Schema).
//
//go:embed schema.json
var schema string
