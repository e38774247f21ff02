// Package azure enables distributor's azure backend, for destinations on
// Azure Blob Storage (the Azure SDK for Go), in a program that imports it
// for its side effect, as package all does; without it, none of its code is
// linked and "backend: azure" is unknown. See docs/backends.md.
package azure

import (
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

func init() { registry.Register(azure.Backend()) }
