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
)

// Put implements storage.Store: see the package documentation.
// PutCreate sends If-None-Match: *, on the Put Blob or on the Put Block
// List of a blob larger than the block size (Azure evaluates the
// condition when it commits), which the server answers with 409
// BlobAlreadyExists or 412 (an error matching storage.ErrPrecondition)
// when the blob exists. PutIfVersion is one conditional Put Blob of
// exactly size bytes of r, from its start, never blocks (whose
// uncommitted leftovers a dead writer would leave behind), so at most
// MaxPutIfSize. A reader that fails, yields more or fewer bytes, or a
// context done before the last byte, cuts the request short, so the
// server stores nothing.
func (s *Store) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	var (
		v   storage.Version
		err error
	)
	if opts.Mode == storage.PutIfVersion {
		var rs io.ReadSeeker
		if rs, err = storage.Seekable(r); err == nil {
			v, err = s.putIf(ctx, p, rs, size, opts.Version)
		}
	} else {
		err = s.put(ctx, p, r, size, opts.Mode == storage.PutCreate, opts)
	}
	if err != nil {
		return "", s.errorf(opts.Mode.Op(), p, err)
	}
	return v, nil
}

// once marks ctx so that the SDK sends its request only once.
func once(ctx context.Context) context.Context {
	return policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
}

// condition returns the access conditions of a write: none, only if
// absent (exclusive), or only if the ETag is ifVersion.
func condition(exclusive bool, ifVersion storage.Version) *blob.AccessConditions {
	var m blob.ModifiedAccessConditions
	switch {
	case exclusive:
		m.IfNoneMatch = new(azcore.ETagAny)
	case ifVersion != "":
		m.IfMatch = new(azcore.ETag(ifVersion))
	default:
		return nil
	}
	return &blob.AccessConditions{ModifiedAccessConditions: &m}
}

// headers returns the blob HTTP headers of a write of p with metadata m:
// the Content-Type from p's extension unless m sets one.
func headers(p string, m storage.Metadata) *blob.HTTPHeaders {
	h := &blob.HTTPHeaders{BlobContentType: new(storage.ContentType(p))}
	if m.ContentType != "" {
		h.BlobContentType = new(m.ContentType)
	}
	if m.CacheControl != "" {
		h.BlobCacheControl = new(m.CacheControl)
	}
	if m.ContentDisposition != "" {
		h.BlobContentDisposition = new(m.ContentDisposition)
	}
	return h
}

func (s *Store) put(ctx context.Context, p string, r io.Reader, size int64, exclusive bool, po storage.PutOptions) error {
	if err := s.begin(ctx, p); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("negative size %d", size)
	}
	er, err := storage.NewExactReader(ctx, r, size)
	if err != nil {
		return err
	}
	bb := s.client.NewBlockBlobClient(s.key(p))
	h, cond := headers(p, po.Metadata), condition(exclusive, "")
	if size <= s.blockSize {
		_, err = bb.Upload(once(ctx), &onceBody{er: er, size: size}, &blockblob.UploadOptions{HTTPHeaders: h, AccessConditions: cond})
	} else {
		err = s.putBlocks(ctx, bb, er, size, h, cond)
	}
	if er.Err() != nil {
		return er.Err() // the reader's failure is the cause, whatever the client made of it
	}
	if err != nil {
		if exclusive && isConditionFailed(err, "") {
			return fmt.Errorf("%w: a blob exists: %w", storage.ErrPrecondition, explain(err))
		}
		return explain(err)
	}
	if er.Left() != 0 {
		return fmt.Errorf("the client sent %d of %d bytes", size-er.Left(), size)
	}
	return nil
}

// putBlocks uploads size bytes of er as blocks of the block size (each
// buffered, so that the SDK may send it again) and commits them with one
// Put Block List carrying h and cond. The block IDs start with a random
// prefix: a concurrent writer of the same blob stages other blocks, and a
// commit names only its own.
func (s *Store) putBlocks(ctx context.Context, bb *blockblob.Client, er *storage.ExactReader, size int64,
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
	er      *storage.ExactReader
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

func (s *Store) putIf(ctx context.Context, p string, r io.ReadSeeker, size int64, ifVersion storage.Version) (storage.Version, error) {
	if err := s.begin(ctx, p); err != nil {
		return "", err
	}
	switch {
	case size < 0:
		return "", fmt.Errorf("negative size %d", size)
	case size > MaxPutIfSize:
		return "", fmt.Errorf("%d bytes: a conditional write is one Put Blob, at most %d bytes (5000 MiB)", size, int64(MaxPutIfSize))
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind the input: %w", err)
	}
	er, err := storage.NewExactReader(ctx, r, size)
	if err != nil {
		return "", err
	}
	pctx := once(ctx)
	if size >= expectContinueMin {
		// The server refuses a failed condition before the body goes
		// out, rather than resetting a connection still sending it.
		pctx = policy.WithHTTPHeader(pctx, http.Header{"Expect": {"100-continue"}})
	}
	resp, err := s.client.NewBlockBlobClient(s.key(p)).Upload(pctx, &onceBody{er: er, size: size},
		&blockblob.UploadOptions{HTTPHeaders: headers(p, storage.Metadata{}), AccessConditions: condition(ifVersion == "", ifVersion)})
	if er.Err() != nil {
		return "", er.Err()
	}
	if err != nil {
		_, _, response := status(err)
		switch {
		case isConditionFailed(err, ifVersion) && ifVersion == "":
			return "", fmt.Errorf("%w: blob exists", storage.ErrPrecondition)
		case isConditionFailed(err, ifVersion):
			return "", fmt.Errorf("%w: version is not %s", storage.ErrPrecondition, ifVersion)
		case !response && er.Left() > 0:
			return "", s.cutShort(ctx, p, ifVersion, explain(err))
		}
		return "", explain(err)
	}
	if er.Left() != 0 {
		return "", fmt.Errorf("the client sent %d of %d bytes", size-er.Left(), size)
	}
	if resp.ETag == nil || *resp.ETag == "" {
		return "", errors.New("the server returned no ETag")
	}
	return storage.Version(*resp.ETag), nil
}

// cutShort returns the error of a conditional Put Blob whose connection
// failed, with err, before the body was sent whole: the server cannot
// have stored it. A server may answer a failed condition before reading
// the body and close the connection, so the client sees a reset instead
// of the 412. One Get Blob Properties tells: if the condition does not
// hold now, the error matches storage.ErrPrecondition; otherwise it is
// err, a transient failure.
func (s *Store) cutShort(ctx context.Context, p string, ifVersion storage.Version, err error) error {
	if ctx.Err() != nil {
		return err
	}
	info, serr := s.stat(ctx, p)
	switch {
	case serr == nil && ifVersion == "":
		return fmt.Errorf("%w: blob exists (the server closed the connection before the body was sent: %v)", storage.ErrPrecondition, err)
	case serr == nil && info.Version != ifVersion:
		return fmt.Errorf("%w: version is not %s (the server closed the connection before the body was sent: %v)", storage.ErrPrecondition, ifVersion, err)
	case errors.Is(serr, storage.ErrNotExist) && ifVersion != "":
		return fmt.Errorf("%w: blob is absent, want version %s (the server closed the connection before the body was sent: %v)", storage.ErrPrecondition, ifVersion, err)
	}
	return err
}
