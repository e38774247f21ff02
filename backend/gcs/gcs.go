// Package gcs enables distributor's gcs backend, for destinations on
// Google Cloud Storage (its JSON API; golang.org/x/oauth2 for credentials). Import it for its side effect:
//
//	import _ "github.com/distributor-dev/distributor/backend/gcs"
//
// A program that does not import it links none of its code, and a
// destination with "backend: gcs" is then refused as an unknown backend.
// The configuration block it reads is described in docs/backends.md.
package gcs

import (
	"github.com/distributor-dev/distributor/internal/storage/gcs"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

func init() { registry.Register(gcs.Backend()) }
