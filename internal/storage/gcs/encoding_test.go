package gcs_test

import (
	"net/url"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/gcs/gcstest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestContentEncoding: objects carry exactly the Content-Encoding of their
// Metadata (none when plain), as a plain GET that accepts gzip reads them,
// and Get returns the bytes as stored: GCS (and fake-gcs-server)
// decompress an object stored gzip-encoded for a request that does not
// accept gzip (spec 3.4).
func TestContentEncoding(t *testing.T) {
	srv := gcstest.FakeGCS(t)
	s := srv.Open(t, gcstest.Prefix(t))
	storagetest.ContentEncoding(t, s, func(t *testing.T, p string) (string, []byte) {
		return storagetest.ServedGET(t, srv.Endpoint+"b/"+srv.Bucket+"/o/"+url.PathEscape(s.Key(p))+"?alt=media")
	})
}
