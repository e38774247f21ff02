// Package gcs enables distributor's gcs backend, for destinations on
// Google Cloud Storage (its JSON API; golang.org/x/oauth2 for credentials). Import it for its side effect:
//
//	import _ "github.com/distributor-dev/distributor/backend/gcs"
//
// Without it, none of its code is linked and "backend: gcs" is an unknown
// backend. docs/backends.md describes its configuration block.
package gcs

import (
	"github.com/distributor-dev/distributor/internal/storage/gcs"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

func init() { registry.Register(gcs.Backend()) }
