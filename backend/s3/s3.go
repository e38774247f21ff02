// Package s3 enables distributor's s3 backend, for destinations on
// S3-compatible object storage (AWS S3, MinIO, SeaweedFS, versitygw; github.com/minio/minio-go). Import it for its side effect:
//
//	import _ "github.com/distributor-dev/distributor/backend/s3"
//
// Without it, none of its code is linked and "backend: s3" is an unknown
// backend. docs/backends.md describes its configuration block.
package s3

import (
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/storage/s3"
)

func init() { registry.Register(s3.Backend()) }
