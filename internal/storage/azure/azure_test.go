package azure_test

import (
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

func TestConformance(t *testing.T) {
	srv := azuretest.Azurite(t)
	t.Run("prefix", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return srv.Open(t) })
	})
}
