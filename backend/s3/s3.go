// Package s3 enables distributor's s3 backend, for destinations on
// S3-compatible object storage (AWS S3, MinIO, SeaweedFS, versitygw;
// github.com/minio/minio-go), in a program that imports it for its side
// effect, as package all does; without it, none of its code is linked and
// "backend: s3" is unknown. See docs/backends.md.
package s3

import (
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/storage/s3"
)

func init() { registry.Register(s3.Backend()) }
