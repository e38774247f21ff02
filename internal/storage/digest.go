package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/distributor-dev/distributor/internal/parhash"
)

// DigestSource is the content of a streamed conditional write on a store
// whose Versions are content digests: exactly Size bytes of a reader,
// copied from its start every time (a retried attempt rewinds it) and
// hashed as they pass, so the new Version needs no second read.
type DigestSource struct {
	r    io.ReadSeeker
	size int64
	v    Version // of the last complete copy
}

// NewDigestSource returns the source of size bytes of r.
func NewDigestSource(r io.ReadSeeker, size int64) *DigestSource {
	return &DigestSource{r: r, size: size}
}

// Size is the number of bytes a copy writes.
func (src *DigestSource) Size() int64 { return src.size }

// CopyTo rewinds the reader and copies exactly Size bytes of it to w,
// hashing them on the reading side (w keeps its own ReaderFrom, if any).
func (src *DigestSource) CopyTo(ctx context.Context, w io.Writer) error {
	if src.size < 0 {
		return fmt.Errorf("negative size %d", src.size)
	}
	if _, err := src.r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewind the input: %w", err)
	}
	// Hashed on another core while the bytes go out (a catalog's upload).
	h := parhash.New(sha256.New())
	defer h.Close()
	if err := CopyExact(ctx, w, io.TeeReader(src.r, h), src.size); err != nil {
		return err
	}
	src.v = SumVersion(h.Sum())
	return nil
}

// Version is the Version of the content the last complete copy wrote.
func (src *DigestSource) Version() Version { return src.v }

// SumVersion is the Version of content whose sha256 digest is sum, as
// stores that version objects by their content (local disk, SFTP) give it:
// "sha256:" and the lowercase hex digest.
func SumVersion(sum []byte) Version { return Version("sha256:" + hex.EncodeToString(sum)) }

// ContentVersion is the Version of data on a store that versions objects
// by their content (see SumVersion).
func ContentVersion(data []byte) Version {
	sum := sha256.Sum256(data)
	return SumVersion(sum[:])
}

// ReadDigested is the body of ReadVersioned on a store that versions
// objects by their content: it shows r to fn through a reader that fails
// once ctx is done, hashing the bytes on another core as they pass (a
// large catalog is decoded and hashed at once), drains what fn leaves
// unread and returns the Version of all of r. An error of fn is returned
// as is, with no Version; a read error after fn is wrapped by wrap.
func ReadDigested(ctx context.Context, r io.Reader, fn func(io.Reader) error, wrap func(error) error) (Version, error) {
	h := parhash.New(sha256.New())
	defer h.Close()
	cr := ContextReader(ctx, io.TeeReader(r, h))
	if err := fn(cr); err != nil {
		return "", err
	}
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return "", wrap(err)
	}
	return SumVersion(h.Sum()), nil
}

// ContextReader returns a reader of r whose every Read fails once ctx is
// done (a Read already blocked in r is not interrupted).
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return &ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}
