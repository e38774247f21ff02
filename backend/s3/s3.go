// Package s3 enables distributor's s3 backend, for destinations on
// S3-compatible object storage (AWS S3, MinIO, SeaweedFS, versitygw; github.com/minio/minio-go). Import it for its side effect:
//
//	import _ "github.com/distributor-dev/distributor/backend/s3"
//
// A program that does not import it links none of its code, and a
// destination with "backend: s3" is then refused as an unknown backend.
// The configuration block it reads is described in docs/backends.md.
package s3

import (
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/storage/s3"
)

func init() { registry.Register(s3.Backend()) }
