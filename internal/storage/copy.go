package storage

import (
	"context"
	"fmt"
	"io"
)

// CopyChunk is how many bytes CopyExact copies between context checks.
const CopyChunk = 1 << 20

// CopyExact copies exactly size bytes from src to dst, checking ctx between
// chunks of CopyChunk bytes, and then checks that src has nothing more. It
// is the body of every adapter's Put: a reader that fails, ends early or
// yields more than size bytes makes it fail, so the Put fails and publishes
// nothing.
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

// Cancelled returns ctx's error if ctx is done, else nil. Unlike ctx.Err
// it calls no Err method while ctx is live: under the root's lock Err checks
// the lock's fence, which reads a clock with a system call (lock.Bind), and
// a copy into a temporary file, which nothing reads before it is published,
// needs only to stop once the run is cancelled or the fence lapsed (the
// lock cancels the context then). The change a write makes visible, the
// rename or link of its temporary file, still checks ctx.Err right before
// it (publish; docs/design.md, "Fencing").
func Cancelled(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
		return nil
	}
}
