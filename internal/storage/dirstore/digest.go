package dirstore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/distributor-dev/distributor/internal/parhash"
	"github.com/distributor-dev/distributor/internal/storage"
)

// DigestSource is the content of a streamed conditional write on a store
// whose Versions are content digests: exactly Size bytes of a reader,
// copied from its start every time (a retried attempt rewinds it) and
// hashed as they pass, so the new Version needs no second read.
type DigestSource struct {
	r    io.ReadSeeker
	size int64
	v    storage.Version // of the last complete copy
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
func (src *DigestSource) Version() storage.Version { return src.v }

// SumVersion is the content Version of a sha256 digest: "sha256:<hex>".
func SumVersion(sum []byte) storage.Version {
	return storage.Version("sha256:" + hex.EncodeToString(sum))
}

// ContentVersion is data's content Version (see SumVersion).
func ContentVersion(data []byte) storage.Version {
	sum := sha256.Sum256(data)
	return SumVersion(sum[:])
}

// ReadDigested is ReadVersioned on a content-versioned store: fn reads r
// (failing once ctx is done) while another core hashes it (a large catalog
// is decoded and hashed at once); what fn leaves is drained. An error of fn
// is returned as is; a read error after fn is wrapped by wrap.
func ReadDigested(ctx context.Context, r io.Reader, fn func(io.Reader) error, wrap func(error) error) (storage.Version, error) {
	h := parhash.New(sha256.New())
	defer h.Close()
	cr := bufio.NewReaderSize(storage.ContextReader(ctx, io.TeeReader(r, h)), storage.HashBuffer)
	if err := fn(cr); err != nil {
		return "", err
	}
	// Discard drains through cr's buffer (io.Copy would hand io.Discard the
	// reader below it, read 8 KiB at a time).
	for {
		if _, err := cr.Discard(storage.HashBuffer); err == io.EOF {
			break
		} else if err != nil {
			return "", wrap(err)
		}
	}
	return SumVersion(h.Sum()), nil
}

// CopyChunk is how many bytes CopyExact copies between context checks.
const CopyChunk = 1 << 20

// CopyExact copies exactly size bytes from src to dst, checking ctx every
// CopyChunk bytes; a src that fails, ends early or has more fails it (so the
// Put publishes nothing).
func CopyExact(ctx context.Context, dst io.Writer, src io.Reader, size int64) error {
	var done int64
	for done < size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.CopyN(dst, src, min(CopyChunk, size-done))
		done += n
		if err == io.EOF {
			return fmt.Errorf("short input: got %d of %d bytes", done, size)
		}
		if err != nil {
			return fmt.Errorf("after %d of %d bytes: %w", done, size, err)
		}
	}
	var extra [1]byte
	n, err := io.ReadFull(src, extra[:])
	switch {
	case n > 0:
		return fmt.Errorf("input is longer than %d bytes", size)
	case err != io.EOF:
		return fmt.Errorf("after %d of %d bytes: %w", size, size, err)
	}
	return ctx.Err()
}
