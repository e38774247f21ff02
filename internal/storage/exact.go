package storage

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// AnswerGrace is how long a request whose body went out whole may still
// wait for its answer after its context ended (a signal, a lapsed fence):
// the server may store it, and only its answer says whether it did, so a
// writer that cut it at once could not tell what its root holds. Past
// this the request is cut and its outcome stays unknown (docs/design.md,
// "Requests cut short").
const AnswerGrace = 2 * time.Second

// ExactReader yields exactly size bytes of a reader and fails, without
// yielding the last bytes, if the reader has fewer or more, fails, or its
// context ends: so an upload whose body is cut short never reaches its
// declared length, and the server stores nothing. Object store adapters
// send their uploads' bodies through one.
type ExactReader struct {
	ctx  context.Context
	r    io.Reader
	left int64
	read int64
	err  error
	// whole: the last byte was handed on, while ctx was alive; mu orders
	// that against Whole.
	mu    sync.Mutex
	whole bool
}

// NewExactReader returns an ExactReader of size bytes of r. For size 0 it
// checks at once that r has nothing to read (nothing will call Read).
func NewExactReader(ctx context.Context, r io.Reader, size int64) (*ExactReader, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative size %d", size)
	}
	e := &ExactReader{ctx: ctx, r: r, left: size}
	if size == 0 {
		if err := e.checkEnd(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Err returns the failure of the reader (or its context), nil if none:
// the cause of a failed upload, whatever the client made of it.
func (e *ExactReader) Err() error { return e.err }

// Whole reports whether the reader handed on its last byte (the server may
// hold the whole body). Once it returned false after the context ended,
// the reader never hands on its last byte.
func (e *ExactReader) Whole() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.whole
}

// Left returns how many bytes have not been read yet.
func (e *ExactReader) Left() int64 { return e.left }

// Read implements io.Reader.
func (e *ExactReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.left == 0 {
		return 0, io.EOF
	}
	if err := e.ctx.Err(); err != nil {
		e.err = err
		return 0, err
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.read += int64(n)
	e.left -= int64(n)
	switch {
	case err == io.EOF && e.left > 0:
		e.err = fmt.Errorf("short input: got %d of %d bytes", e.read, e.read+e.left)
	case err != nil && err != io.EOF:
		e.err = fmt.Errorf("after %d bytes: %w", e.read, err)
	case e.left == 0:
		e.err = e.checkEnd()
	}
	if e.err != nil {
		return 0, e.err // withhold this chunk: the body stays incomplete
	}
	return n, nil
}

// checkEnd checks that r has no byte left and ctx is alive.
func (e *ExactReader) checkEnd() error {
	var extra [1]byte
	n, err := io.ReadFull(e.r, extra[:])
	switch {
	case n > 0:
		return fmt.Errorf("input is longer than %d bytes", e.read)
	case err != io.EOF:
		return fmt.Errorf("after %d bytes: %w", e.read, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.ctx.Err(); err != nil {
		return err
	}
	e.whole = true
	return nil
}
