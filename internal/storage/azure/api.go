package azure

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
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

// object is key's objstore.Object; any property may be nil (zero).
func object(key string, size *int64, modTime *time.Time, etag *azcore.ETag) objstore.Object {
	return objstore.Object{Key: key, Size: *cmp.Or(size, new(int64)), ModTime: *cmp.Or(modTime, new(time.Time)),
		Version: etagVersion(etag)}
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
			pr := cmp.Or(it.Properties, &container.BlobProperties{})
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
	return slices.DeleteFunc(all, func(u objstore.Upload) bool { return committed[u.Key] }), nil
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

// Put sends one Put Blob, or for a PutReplace or PutCreate above the block
// size, blocks committed by one Put Block List (which evaluates the
// condition). PutIfVersion is always one Put Blob: no leftover blocks.
func (a api) Put(ctx context.Context, key string, w objstore.Write) (storage.Version, error) {
	bb := a.s.client.NewBlockBlobClient(key)
	h, cond := headers(w.Metadata), condition(w)
	if w.Mode != storage.PutIfVersion && w.Size > a.s.blockSize {
		return "", putError(a.s.putBlocks(ctx, bb, w.Body, w.Size, h, cond), w)
	}
	pctx := once(ctx)
	if w.ExpectContinue {
		pctx = policy.WithHTTPHeader(pctx, http.Header{"Expect": {"100-continue"}})
	}
	resp, err := bb.Upload(pctx, &onceBody{er: w.Body, size: w.Size}, &blockblob.UploadOptions{HTTPHeaders: h, AccessConditions: cond})
	if err != nil || resp.ETag == nil {
		return "", putError(err, w)
	}
	return storage.Version(*resp.ETag), nil
}

// putError is a write's error (nil for none): the server's refusal of its
// condition (412, 409 BlobAlreadyExists, or for an If-Match a 404 for a
// missing blob) is ErrPrecondition.
func putError(err error, w objstore.Write) error {
	st, code, _ := status(err)
	refused := st == http.StatusPreconditionFailed || code == codeBlobAlreadyExists
	switch {
	case err == nil:
		return nil
	case w.Mode == storage.PutCreate && refused:
		return fmt.Errorf("%w: a blob exists: %w", storage.ErrPrecondition, explain(err))
	case w.Mode != storage.PutIfVersion:
	case refused && w.IfVersion == "":
		return fmt.Errorf("%w: blob exists", storage.ErrPrecondition)
	case refused || w.IfVersion != "" && (code == codeBlobNotFound || st == http.StatusNotFound && code != codeContainerNotFound):
		return fmt.Errorf("%w: version is not %s", storage.ErrPrecondition, w.IfVersion)
	}
	return explain(err)
}

func once(ctx context.Context) context.Context {
	return policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
}

func condition(w objstore.Write) *blob.AccessConditions {
	var m blob.ModifiedAccessConditions
	switch {
	case w.Mode == storage.PutCreate, w.Mode == storage.PutIfVersion && w.IfVersion == "":
		m.IfNoneMatch = new(azcore.ETagAny)
	case w.Mode == storage.PutIfVersion:
		m.IfMatch = new(azcore.ETag(w.IfVersion))
	default:
		return nil
	}
	return &blob.AccessConditions{ModifiedAccessConditions: &m}
}

// headers are the blob's HTTP headers: m's, those it leaves empty unset.
func headers(m storage.Metadata) *blob.HTTPHeaders {
	return &blob.HTTPHeaders{BlobContentType: new(m.ContentType), BlobCacheControl: set(m.CacheControl),
		BlobContentDisposition: set(m.ContentDisposition), BlobContentEncoding: set(m.ContentEncoding)}
}

// set is the address of v, or nil for "" (no header).
func set(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// putBlocks uploads size bytes of er as blocks of the block size (each
// buffered, so that the SDK may send it again) and commits them with one
// Put Block List carrying h and cond. The block IDs start with a random
// prefix: a concurrent writer of the same blob stages other blocks, and a
// commit names only its own.
func (s *Store) putBlocks(ctx context.Context, bb *blockblob.Client, er *objstore.ExactReader, size int64,
	h *blob.HTTPHeaders, cond *blob.AccessConditions) error {
	var upload [16]byte
	rand.Read(upload[:8])
	buf := make([]byte, s.blockSize)
	var ids []string
	for left := size; left > 0; {
		n := min(left, s.blockSize)
		if _, err := io.ReadFull(er, buf[:n]); err != nil {
			return err
		}
		binary.BigEndian.PutUint64(upload[8:], uint64(len(ids)))
		id := base64.StdEncoding.EncodeToString(upload[:])
		if _, err := bb.StageBlock(ctx, id, streaming.NopCloser(bytes.NewReader(buf[:n])), nil); err != nil {
			return fmt.Errorf("block %d: %w", len(ids), err)
		}
		ids = append(ids, id)
		left -= n
	}
	_, err := bb.CommitBlockList(once(ctx), ids, &blockblob.CommitBlockListOptions{HTTPHeaders: h, AccessConditions: cond})
	return err
}

// onceBody is a request body that the SDK may seek to its end or start (it
// measures the body, and rewinds it before a retry) only before its first
// byte is read: a streamed body is sent once.
type onceBody struct {
	er      *objstore.ExactReader
	size    int64
	pos     int64 // where a seek put it, before reading
	started bool
}

func (b *onceBody) Read(p []byte) (int, error) {
	first := !b.started
	if b.started = true; first && b.pos != 0 {
		return 0, errors.New("body read away from its start")
	}
	return b.er.Read(p)
}

func (b *onceBody) Seek(offset int64, whence int) (int64, error) {
	if b.started {
		return 0, errors.New("the body is streamed: it cannot be sent again")
	}
	switch {
	case offset != 0 || uint(whence) > io.SeekEnd:
		return 0, errors.New("the body seeks to its start or end only")
	case whence == io.SeekStart:
		b.pos = 0
	case whence == io.SeekEnd:
		b.pos = b.size
	}
	return b.pos, nil
}

func (b *onceBody) Close() error { return nil }
