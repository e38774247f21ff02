package txn

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage"
)

// RunID returns a random id naming one attempt in journals and logs.
func RunID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(b)
}

// HashObject streams an object and returns its "sha256:<hex>" digest and size.
func HashObject(ctx context.Context, st storage.Store, path string) (string, int64, error) {
	rc, err := st.Open(ctx, path)
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	h := sha256.New()
	n, err := storage.Hash(ctx, h, rc)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	return bundle.FormatSHA256(h.Sum(nil)), n, nil
}

// ReadCatalog reads a root's catalog and classifies it; one that is not a
// regular object (a directory, a symbolic link) is invalid, never none.
func ReadCatalog(ctx context.Context, st storage.Store) (catalog.State, storage.Version, error) {
	data, ver, err := st.Get(ctx, catalog.FileName)
	switch {
	case errors.Is(err, storage.ErrNotObject):
		return catalog.State{Status: catalog.StatusInvalid,
			Problem: fmt.Errorf("%s is not a regular file: %w", catalog.FileName, err)}, "", nil
	case errors.Is(err, storage.ErrNotExist):
		return catalog.Read(nil), "", nil
	case err != nil:
		return catalog.State{}, "", err // the store's error names the root and the file
	}
	return catalog.Read(data), ver, nil
}
