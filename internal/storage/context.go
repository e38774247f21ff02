package storage

import (
	"context"
	"io"
	"time"
)

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

// HashBuffer is how many bytes a hashing read asks of a store at a time,
// each read with one check of the context (a clock read where it is a
// lock's fence); dirstore's BenchmarkReadDigested holds it.
const HashBuffer = 64 << 10

// Hash writes r into h, HashBuffer bytes at a time, each read failing once
// ctx is done, and returns how many bytes it hashed.
func Hash(ctx context.Context, h io.Writer, r io.Reader) (int64, error) {
	return io.CopyBuffer(h, ContextReader(ctx, r), make([]byte, HashBuffer))
}

// AnswerGrace is how long a request whose body went out whole may still
// wait for its answer after its context ended (a signal, a lapsed fence):
// the server may store it, and only its answer says whether it did, so a
// writer that cut it at once could not tell what its root holds. Past
// this the request is cut and its outcome stays unknown (docs/design.md,
// "Requests cut short").
const AnswerGrace = 2 * time.Second
