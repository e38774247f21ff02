package azure

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// api is the store's objstore.Client.
type api struct{ s *Store }

// Open starts one Get Blob of key; the response's ETag is the Version.
func (a api) Open(ctx context.Context, key string) (io.ReadCloser, storage.Version, error) {
	resp, err := a.s.client.NewBlobClient(key).DownloadStream(ctx, nil)
	if err != nil {
		return nil, "", explain(err)
	}
	return &body{resp.Body}, etagVersion(resp.ETag), nil
}

// body is a download's body, its errors explained.
type body struct{ io.ReadCloser }

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = explain(err)
	}
	return n, err
}

func (a api) Head(ctx context.Context, key string) (objstore.Object, error) {
	resp, err := a.s.client.NewBlobClient(key).GetProperties(ctx, nil)
	if err != nil {
		return objstore.Object{}, explain(err)
	}
	return object(key, resp.ContentLength, resp.LastModified, resp.ETag), nil
}

// object is key's objstore.Object; any property may be nil.
func object(key string, size *int64, modTime *time.Time, etag *azcore.ETag) objstore.Object {
	o := objstore.Object{Key: key, Version: etagVersion(etag)}
	if size != nil {
		o.Size = *size
	}
	if modTime != nil {
		o.ModTime = *modTime
	}
	return o
}

// etagVersion is the Version of a blob with the ETag e ("" for none), in
// the quoted form of the responses' ETag headers (which Put returns and
// If-Match takes) also where a listing gives it unquoted.
func etagVersion(e *azcore.ETag) storage.Version {
	if e == nil || *e == "" {
		return ""
	}
	if s := string(*e); !strings.HasPrefix(s, `"`) && !strings.HasPrefix(s, "W/") {
		return storage.Version(`"` + s + `"`)
	}
	return storage.Version(*e)
}

func (a api) Delete(ctx context.Context, key string) error {
	_, err := a.s.client.NewBlobClient(key).Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: new(blob.DeleteSnapshotsOptionTypeInclude)})
	return explain(err)
}

func (a api) List(ctx context.Context, prefix string, max int, fn func(objstore.Object)) (bool, error) {
	return a.list(ctx, &container.ListBlobsFlatOptions{Prefix: &prefix}, max, fn)
}

func (a api) list(ctx context.Context, opts *container.ListBlobsFlatOptions, max int, fn func(objstore.Object)) (bool, error) {
	if max > 0 {
		opts.MaxResults = new(int32(max))
	}
	pager := a.s.client.NewListBlobsFlatPager(opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return false, explain(err)
		}
		for _, it := range page.Segment.BlobItems {
			if it == nil || it.Name == nil {
				continue
			}
			pr := it.Properties
			if pr == nil {
				pr = &container.BlobProperties{}
			}
			fn(object(*it.Name, pr.ContentLength, pr.LastModified, pr.ETag))
		}
		if max > 0 {
			return page.NextMarker != nil && *page.NextMarker != "", nil
		}
	}
	return false, nil
}

// Uploads lists the uncommitted blobs under prefix: a writer that died
// uploading in blocks leaves them where no committed blob is, unseen and
// billed until Azure discards them after a week (an existing blob's go with
// its next write). They are in a listing that includes them and not in a
// later one that does not (a blob committed in between is in both).
func (a api) Uploads(ctx context.Context, prefix string) ([]objstore.Upload, error) {
	var all []objstore.Upload
	_, err := a.list(ctx, &container.ListBlobsFlatOptions{Prefix: &prefix, Include: container.ListBlobsInclude{UncommittedBlobs: true}},
		0, func(o objstore.Object) { all = append(all, objstore.Upload{Key: o.Key, Size: o.Size}) })
	if err != nil || len(all) == 0 {
		return nil, err
	}
	committed := map[string]bool{}
	if _, err := a.List(ctx, prefix, 0, func(o objstore.Object) { committed[o.Key] = true }); err != nil {
		return nil, err
	}
	var dead []objstore.Upload
	for _, u := range all {
		if !committed[u.Key] {
			dead = append(dead, u)
		}
	}
	return dead, nil
}

// Abort deletes the uncommitted blob u (not conditioned on the listed
// ETag: Azurite refuses If-Match on an uncommitted blob; the lock's holder
// is the only writer).
func (a api) Abort(ctx context.Context, u objstore.Upload) error {
	_, err := a.s.client.NewBlobClient(u.Key).Delete(ctx, nil)
	if err = explain(err); err != nil && !errors.Is(err, storage.ErrNotExist) {
		return err
	}
	return nil
}
