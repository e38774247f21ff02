package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Get implements storage.Store: it reads a blob whole, with the ETag of
// the same response as its Version.
func (s *Store) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	var data []byte
	v, err := s.readVersioned(ctx, p, func(r io.Reader) (err error) {
		data, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		return nil, "", s.errorf("get", p, err)
	}
	return data, v, nil
}

// download starts one Get Blob of p.
func (s *Store) download(ctx context.Context, p string) (io.ReadCloser, storage.Version, error) {
	if err := s.begin(ctx, p); err != nil {
		return nil, "", err
	}
	resp, err := s.client.NewBlobClient(s.key(p)).DownloadStream(ctx, nil)
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

// ReadVersioned implements storage.Store: one streaming Get Blob, whose
// response's ETag is the Version (so it describes the bytes streamed, even
// if the blob is replaced meanwhile). What fn leaves unread is drained. A
// missing blob yields an error matching storage.ErrNotExist before fn is
// called.
func (s *Store) ReadVersioned(ctx context.Context, p string, fn func(io.Reader) error) (storage.Version, error) {
	var fnErr error
	v, err := s.readVersioned(ctx, p, func(r io.Reader) error {
		fnErr = fn(r)
		return fnErr
	})
	switch {
	case fnErr != nil:
		return "", fnErr
	case err != nil:
		return "", s.errorf("read", p, err)
	}
	return v, nil
}

func (s *Store) readVersioned(ctx context.Context, p string, fn func(io.Reader) error) (storage.Version, error) {
	rc, v, err := s.download(ctx, p)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	if v == "" {
		return "", errors.New("the server returned no ETag")
	}
	if err := fn(rc); err != nil {
		return "", err
	}
	if _, err := io.Copy(io.Discard, rc); err != nil {
		return "", err
	}
	return v, nil
}

// Open implements storage.Store: one streaming Get Blob.
func (s *Store) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	rc, _, err := s.download(ctx, p)
	if err != nil {
		return nil, s.errorf("open", p, err)
	}
	return rc, nil
}

// Stat implements storage.Store (Get Blob Properties).
func (s *Store) Stat(ctx context.Context, p string) (storage.Info, error) {
	info, err := s.stat(ctx, p)
	if err != nil {
		return storage.Info{}, s.errorf("stat", p, err)
	}
	return info, nil
}

func (s *Store) stat(ctx context.Context, p string) (storage.Info, error) {
	if err := s.begin(ctx, p); err != nil {
		return storage.Info{}, err
	}
	resp, err := s.client.NewBlobClient(s.key(p)).GetProperties(ctx, nil)
	if err != nil {
		return storage.Info{}, explain(err)
	}
	info := storage.Info{Path: p, Version: etagVersion(resp.ETag)}
	if resp.ContentLength != nil {
		info.Size = *resp.ContentLength
	}
	if resp.LastModified != nil {
		info.ModTime = *resp.LastModified
	}
	return info, nil
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

// Delete implements storage.Store (Delete Blob, with its snapshots).
// Deleting a missing blob is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := s.begin(ctx, p); err != nil {
		return s.errorf("delete", p, err)
	}
	_, err := s.client.NewBlobClient(s.key(p)).Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: new(blob.DeleteSnapshotsOptionTypeInclude)})
	if err != nil {
		if err := explain(err); !errors.Is(err, storage.ErrNotExist) {
			return s.errorf("delete", p, err)
		}
	}
	return nil
}

// List implements storage.Store (List Blobs, flat, paginated). Azure lists
// blob names in byte-wise order; the store sorts a listing that is not
// and refuses one that names a blob twice. Temporary objects and names
// ending in "/" are skipped. If fn returns an error, List stops and
// returns that error unwrapped.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return storage.ListResult(s.list(ctx, prefix, fn), func(err error) error {
		return s.errorf("list", strconv.Quote(prefix), err)
	})
}

func (s *Store) list(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	if _, _, err := storage.SplitPrefix(prefix); err != nil {
		return err
	}
	if s.closed.Load() {
		return os.ErrClosed
	}
	var infos []storage.Info
	pager := s.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: new(s.key(prefix))})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return explain(err)
		}
		infos = s.appendInfos(infos, page.Segment.BlobItems)
	}
	infos, err := storage.SortListing(infos)
	if err != nil {
		return err
	}
	for _, info := range infos {
		if err := fn(info); err != nil {
			return &storage.CallbackError{Err: err}
		}
	}
	return nil
}

// appendInfos appends the Infos of the blobs items below the root, less
// temporary objects and names ending in "/".
func (s *Store) appendInfos(infos []storage.Info, items []*container.BlobItem) []storage.Info {
	for _, it := range items {
		if it == nil || it.Name == nil {
			continue
		}
		rel, ok := strings.CutPrefix(*it.Name, s.keyPrefix)
		if !ok || rel == "" || strings.HasSuffix(rel, "/") || storage.IsTemp(rel) {
			continue
		}
		info := storage.Info{Path: rel}
		if pr := it.Properties; pr != nil {
			if pr.ContentLength != nil {
				info.Size = *pr.ContentLength
			}
			if pr.LastModified != nil {
				info.ModTime = *pr.LastModified
			}
			info.Version = etagVersion(pr.ETag)
		}
		infos = append(infos, info)
	}
	return infos
}

// ListPage implements storage.PageLister: one List Blobs request for up
// to max+1 blobs below the root starting with prefix. It returns at most
// max objects, sorted (temporary objects skipped), and complete when the
// server had no more.
func (s *Store) ListPage(ctx context.Context, prefix string, max int) ([]storage.Info, bool, error) {
	infos, complete, err := s.listPage(ctx, prefix, max)
	if err != nil {
		return nil, false, s.errorf("list", strconv.Quote(prefix), err)
	}
	return infos, complete, nil
}

func (s *Store) listPage(ctx context.Context, prefix string, max int) ([]storage.Info, bool, error) {
	if _, _, err := storage.SplitPrefix(prefix); err != nil {
		return nil, false, err
	}
	if s.closed.Load() {
		return nil, false, os.ErrClosed
	}
	if max < 1 || max > 4999 {
		return nil, false, fmt.Errorf("page size %d: want 1 to 4999", max)
	}
	pager := s.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: new(s.key(prefix)), MaxResults: new(int32(max + 1))})
	page, err := pager.NextPage(ctx)
	if err != nil {
		return nil, false, explain(err)
	}
	items := page.Segment.BlobItems
	// A page may hold fewer blobs than asked for and still have a next
	// one (Azure ends pages at partition boundaries).
	complete := len(items) <= max && (page.NextMarker == nil || *page.NextMarker == "")
	if len(items) > max {
		items = items[:max]
	}
	infos, err := storage.SortListing(s.appendInfos(nil, items))
	if err != nil {
		return nil, false, err
	}
	return infos, complete, nil
}

// Sync implements storage.Store. A Put is durable when the server answers
// it, so it does nothing.
func (s *Store) Sync(ctx context.Context) error { return nil }
