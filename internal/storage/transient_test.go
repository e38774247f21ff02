package storage_test

import (
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestIsTransient classifies the errors every adapter shares.
func TestIsTransient(t *testing.T) {
	storagetest.Classify(t, storage.IsTransient, storagetest.NetworkCases())
}
