package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// DigestVersion is the Version of content whose sha256 h holds, as stores
// that version objects by their content (local disk, SFTP) give it:
// "sha256:" and the lowercase hex digest.
func DigestVersion(h hash.Hash) Version {
	return Version("sha256:" + hex.EncodeToString(h.Sum(nil)))
}

// DigestSource is the content of a streamed conditional write on a store
// whose Versions are content digests: exactly Size bytes of a reader,
// copied from its start every time (a retried attempt rewinds it) and
// hashed as they pass, so the new Version needs no second read.
type DigestSource struct {
	r    io.ReadSeeker
	size int64
	h    hash.Hash // of the last complete copy
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
	h := sha256.New()
	if err := CopyExact(ctx, w, io.TeeReader(src.r, h), src.size); err != nil {
		return err
	}
	src.h = h
	return nil
}

// Version is the Version of the content the last complete copy wrote.
func (src *DigestSource) Version() Version { return DigestVersion(src.h) }
