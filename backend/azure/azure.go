// Package azure enables distributor's azure backend, for destinations on
// Azure Blob Storage (the Azure SDK for Go). Import it for its side effect:
//
//	import _ "github.com/distributor-dev/distributor/backend/azure"
//
// A program that does not import it links none of its code, and a
// destination with "backend: azure" is then refused as an unknown backend.
// The configuration block it reads is described in docs/backends.md.
package azure

import (
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

func init() { registry.Register(azure.Backend()) }
