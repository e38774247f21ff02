// Package gcs enables distributor's gcs backend, for destinations on Google
// Cloud Storage (its JSON API; golang.org/x/oauth2 for credentials), in a
// program that imports it for its side effect, as package all does; without
// it, none of its code is linked and "backend: gcs" is unknown. See docs/backends.md.
package gcs

import (
	"github.com/distributor-dev/distributor/internal/storage/gcs"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

func init() { registry.Register(gcs.Backend()) }
