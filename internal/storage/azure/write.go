package azure

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

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

// putError is a write's error (nil for none): a refused condition is ErrPrecondition.
func putError(err error, w objstore.Write) error {
	switch {
	case err == nil:
		return nil
	case w.Mode == storage.PutCreate && isConditionFailed(err, ""):
		return fmt.Errorf("%w: a blob exists: %w", storage.ErrPrecondition, explain(err))
	case w.Mode != storage.PutIfVersion:
	case isConditionFailed(err, w.IfVersion) && w.IfVersion == "":
		return fmt.Errorf("%w: blob exists", storage.ErrPrecondition)
	case isConditionFailed(err, w.IfVersion):
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

// isConditionFailed reports whether err is the server's refusal of a
// write's condition: 412, 409 BlobAlreadyExists, or (for an If-Match,
// ifVersion not "") a 404 for a missing blob.
func isConditionFailed(err error, ifVersion storage.Version) bool {
	st, code, ok := status(err)
	switch {
	case !ok:
		return false
	case st == http.StatusPreconditionFailed, code == codeBlobAlreadyExists:
		return true
	}
	return ifVersion != "" && (code == codeBlobNotFound || st == http.StatusNotFound && code != codeContainerNotFound)
}

// onceBody is a request body that the SDK may seek (it measures the body,
// and rewinds it before a retry) only before its first byte is read: a
// streamed body is sent once.
type onceBody struct {
	er      *objstore.ExactReader
	size    int64
	pos     int64 // where a seek put it, before reading
	started bool
}

func (b *onceBody) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		if b.pos != 0 {
			return 0, errors.New("body read away from its start")
		}
	}
	return b.er.Read(p)
}

func (b *onceBody) Seek(offset int64, whence int) (int64, error) {
	if b.started {
		return 0, errors.New("the body is streamed: it cannot be sent again")
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.pos
	case io.SeekEnd:
		offset += b.size
	default:
		return 0, errors.New("bad whence")
	}
	if offset < 0 || offset > b.size {
		return 0, errors.New("seek out of range")
	}
	b.pos = offset
	return offset, nil
}

func (b *onceBody) Close() error { return nil }
