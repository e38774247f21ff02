// Package azure enables distributor's azure backend, for destinations on
// Azure Blob Storage (the Azure SDK for Go). Import it for its side effect:
//
//	import _ "github.com/distributor-dev/distributor/backend/azure"
//
// Without it, none of its code is linked and "backend: azure" is an unknown
// backend. docs/backends.md describes its configuration block.
package azure

import (
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

func init() { registry.Register(azure.Backend()) }
