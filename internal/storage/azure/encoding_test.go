package azure_test

import (
	"net/url"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestContentEncoding: blobs carry exactly the Content-Encoding of their
// Metadata (none when plain), for a Put Blob and committed blocks, as a
// plain GET with a SAS reads them, and Get returns the bytes as stored,
// not decoded by the transport (spec 3.4).
func TestContentEncoding(t *testing.T) {
	srv := azuretest.Azurite(t)
	for name, block := range map[string]int64{"put-blob": 0, "blocks": 4 << 20} {
		t.Run(name, func(t *testing.T) {
			opts := srv.Options(srv.UniquePrefix(t))
			opts.BlockSize = block
			s := azuretest.OpenWith(t, opts)
			sas := srv.SAS(t, srv.Container)
			storagetest.ContentEncoding(t, s, func(t *testing.T, p string) (string, []byte) {
				return storagetest.ServedGET(t, srv.Endpoint+"/"+srv.Container+"/"+(&url.URL{Path: s.Key(p)}).EscapedPath()+"?"+sas)
			})
		})
	}
}
