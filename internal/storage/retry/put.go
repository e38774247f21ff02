package retry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/distributor-dev/distributor/internal/storage"
)

// errAttemptOver is what a Put's reader returns to a Read that comes after
// its attempt ended (a client library reading a request body late).
var errAttemptOver = errors.New("retry: read after the attempt ended")

// body is the caller's reader of a Put, shared by its attempts. Each
// attempt reads it through its own attemptReader; when the attempt ends,
// that reader is fenced off, so that a late Read (an HTTP transport may
// read a request body after its round trip returned) never takes bytes
// from the next attempt, or from a reader the caller has closed.
type body struct {
	mu       sync.Mutex
	r        io.Reader
	seeker   io.Seeker // nil: the reader cannot be replayed once read
	start    int64     // where the reader was when Put was called
	gen      int       // the attempt whose reader may read
	consumed int64     // bytes read over all attempts
	n        int64     // bytes read in this attempt
	rerr     error     // the reader's own failure in this attempt
}

func newBody(r io.Reader) *body {
	b := &body{r: r}
	if sk, ok := r.(io.Seeker); ok {
		if off, err := sk.Seek(0, io.SeekCurrent); err == nil {
			b.seeker, b.start = sk, off
		}
	}
	return b
}

func (b *body) attempt() *attemptReader {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gen++
	b.n, b.rerr = 0, nil
	return &attemptReader{b: b, gen: b.gen}
}

// end fences off the current attempt's reader and returns the bytes it
// read and the reader's own failure.
func (b *body) end() (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gen++
	return b.n, b.rerr
}

// rewind seeks the reader back to its start, if anything was read (with
// seek false, it only says why it could not).
func (b *body) rewind(seek bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.consumed == 0:
		return nil
	case b.seeker == nil:
		return fmt.Errorf("%d bytes of a reader that cannot seek were consumed", b.consumed)
	case !seek:
		return nil
	}
	if _, err := b.seeker.Seek(b.start, io.SeekStart); err != nil {
		return fmt.Errorf("seek the reader back: %w", err)
	}
	return nil
}

// attemptReader is one attempt's view of a body.
type attemptReader struct {
	b   *body
	gen int
}

func (a *attemptReader) Read(p []byte) (int, error) {
	b := a.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.gen != b.gen {
		return 0, errAttemptOver
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	b.consumed += int64(n)
	if err != nil && err != io.EOF {
		b.rerr = err
	}
	return n, err
}

// seekingAttempt is one attempt's view of a body that the attempt may seek
// (a PutIfVersion Put's, whose body always has its seeker).
type seekingAttempt struct{ *attemptReader }

func (a seekingAttempt) Seek(off int64, whence int) (int64, error) {
	b := a.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.gen != b.gen {
		return 0, errAttemptOver
	}
	pos, err := b.seeker.Seek(off, whence)
	if err != nil {
		b.rerr = err
	}
	return pos, err
}

// want returns the SHA-256 of the size bytes a Put sends: sum (its
// PutOptions.SHA256) when given, else read again from the reader's start
// (any attempt's reader is fenced off first).
func (b *body) want(sum string, size int64) ([]byte, error) {
	if d, err := hex.DecodeString(strings.TrimPrefix(sum, "sha256:")); err == nil && len(d) == sha256.Size {
		return d, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gen++
	if b.seeker != nil {
		if _, err := b.seeker.Seek(b.start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("seek the reader back: %w", err)
		}
	} else if b.consumed > 0 {
		return nil, errors.New("the reader cannot seek")
	}
	h := sha256.New()
	n, err := io.CopyN(h, b.r, size)
	b.consumed += n
	switch {
	case err == io.EOF:
		return nil, fmt.Errorf("short input: got %d of %d bytes", n, size)
	case err != nil:
		return nil, fmt.Errorf("hash the input: %w", err)
	}
	return h.Sum(nil), nil
}

// Put implements storage.Store, retrying as the package documentation says.
func (s *Store) Put(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion {
		return s.putIf(ctx, path, r, size, opts)
	}
	return "", s.send(&call{s: s, ctx: ctx, op: opts.Mode.Op(), path: path}, r, size, opts, func(ar io.Reader) error {
		_, err := s.Store.Put(ctx, path, ar, size, opts)
		return err
	})
}

// Stage implements storage.Store, retried as a PutReplace Put. The
// returned Staged's Commit and Abort are not retried: a commit whose
// answer was lost has an unknown outcome, which the writer's cleanup
// establishes by looking at the path.
func (s *Store) Stage(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	var sg storage.Staged // (nil with an error)
	err := s.send(&call{s: s, ctx: ctx, op: "stage", path: path}, r, size, storage.PutOptions{}, func(ar io.Reader) (err error) {
		sg, err = s.Store.Stage(ctx, path, ar, size, opts)
		return err
	})
	return sg, err
}

// send runs the attempts of a PutReplace or PutCreate (exclusive) Put, or
// of a Stage, each reading r through its own fenced-off view (see body).
func (s *Store) send(c *call, r io.Reader, size int64, opts storage.PutOptions, attempt func(io.Reader) error) error {
	b := newBody(r)
	exclusive := opts.Mode == storage.PutCreate
	sentAll := false // PutCreate: a failed attempt sent everything, unanswered
	for {
		err := attempt(b.attempt())
		n, rerr := b.end()
		switch {
		case err == nil:
			return nil
		case exclusive && sentAll && errors.Is(err, storage.ErrPrecondition):
			// An earlier attempt may have landed: Put succeeds if the object
			// holds b's bytes, fails with err if another entry holds the
			// name (or held it until just now: absent, or not an object).
			_, _, err = s.settleIf(c, "", err, func() (storage.Version, bool, error) {
				rc, err := s.Store.Open(c.ctx, c.path)
				if errors.Is(err, storage.ErrNotExist) {
					return "", false, nil // (ErrNotObject too) settleIf fails with the precondition
				} else if err != nil {
					return "", false, err
				}
				defer rc.Close()
				h := sha256.New()
				if n, err := storage.Hash(c.ctx, h, rc); err != nil {
					return "", false, fmt.Errorf("read back %s: %w", c.path, err)
				} else if n != size {
					return "", false, nil
				}
				want, err := b.want(opts.SHA256, size)
				if err != nil {
					return "", false, &readerError{err}
				}
				return "", bytes.Equal(h.Sum(nil), want), nil
			})
			return err
		case rerr != nil, !s.IsTransient(err):
			return c.final(err)
		}
		if why := b.rewind(false); why != nil {
			return c.final(fmt.Errorf("%w (not retried: %v)", err, why))
		}
		sentAll = sentAll || exclusive && n == size
		if err := c.again(err); err != nil {
			return err
		}
		if rerr := b.rewind(true); rerr != nil {
			return fmt.Errorf("%w (not retried: %v)", err, rerr)
		}
	}
}

// unknownOutcome is the error of a conditional write whose outcome could
// not be read back: it matches the read-back's failure, not werr.
func unknownOutcome(c *call, werr, rerr error) error {
	return fmt.Errorf("%s %s: outcome unknown: an attempt may have written it before one failed (%v), and reading it back failed: %w",
		c.op, c.path, werr, rerr)
}

// putIf is Put with PutIfVersion (see the package documentation).
func (s *Store) putIf(ctx context.Context, path string, in io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	r, err := storage.Seekable(in)
	if err != nil {
		return "", fmt.Errorf("put-if %s: %w", path, err)
	}
	// Not hashed while it is sent (a catalog of hundreds of MB, hashed
	// by the store already): a read-back takes opts.SHA256, or hashes r again.
	b := newBody(r)
	b.seeker, b.start = r, 0 // the content is r from its start
	var want []byte
	// readBack reports the object's Version and whether it holds the content.
	readBack := func() (storage.Version, bool, error) {
		if want == nil {
			sum, err := b.want(opts.SHA256, size)
			if err != nil {
				return "", false, &readerError{err}
			}
			want = sum
		}
		h := sha256.New()
		var n int64
		cur, err := s.Store.ReadVersioned(ctx, path, func(r io.Reader) (err error) {
			n, err = storage.Hash(ctx, h, r)
			return err
		})
		return cur, err == nil && n == size && bytes.Equal(h.Sum(nil), want), err
	}
	c := &call{s: s, ctx: ctx, op: "put-if", path: path}
	uncertain := false // an attempt failed without an answer: it may have landed
	for {
		if err := b.rewind(true); err != nil {
			return "", c.final(err)
		}
		v, err := s.Store.Put(ctx, path, seekingAttempt{b.attempt()}, size, opts)
		if _, rerr := b.end(); err == nil {
			return v, nil
		} else if rerr != nil {
			return "", c.final(err) // the reader's own failure is not retried
		}
		precond := errors.Is(err, storage.ErrPrecondition)
		switch {
		case precond && !uncertain, !precond && !s.IsTransient(err):
			return "", c.final(err)
		case !precond:
			uncertain = true
			if err := c.again(err); err != nil {
				return "", err
			}
		}
		v, retry, serr := s.settleIf(c, opts.Version, err, readBack)
		if !retry {
			return v, serr
		}
		if precond {
			// The server said the condition failed and the read-back says it
			// holds: count it as a failure, so that a flapping condition
			// cannot retry forever. Not wrapped: the call did not fail on the
			// condition.
			if err := c.again(fmt.Errorf("condition holds again after %v", err)); err != nil {
				return "", err
			}
		}
	}
}

// readerError marks a failure of the caller's reader (Read or Seek) in a
// read-back: it is not retried, and the outcome is unknown.
type readerError struct{ err error }

func (e *readerError) Error() string { return e.err.Error() }
func (e *readerError) Unwrap() error { return e.err }

// settleIf reads the object back after the attempt that failed with werr,
// when one may have landed unanswered: the object's Version if it holds
// this call's content, retry when the condition holds, else an error
// matching storage.ErrPrecondition (or saying the outcome is unknown).
func (s *Store) settleIf(c *call, ifVersion storage.Version, werr error,
	readBack func() (storage.Version, bool, error)) (v storage.Version, retry bool, err error) {
	for {
		cur, ours, err := readBack()
		if re, ok := errors.AsType[*readerError](err); ok {
			return "", false, unknownOutcome(c, werr, re.err)
		}
		switch {
		case err == nil && ours:
			return cur, false, nil // the write landed
		case err == nil && ifVersion != "" && cur == ifVersion:
			return "", true, nil
		case err == nil:
			return "", false, c.precondition(werr, fmt.Sprintf("the object holds other bytes (version %s)", cur))
		case errors.Is(err, storage.ErrNotObject):
			return "", false, c.precondition(werr, "the name is not an object")
		case errors.Is(err, storage.ErrNotExist):
			if ifVersion == "" {
				return "", true, nil
			}
			return "", false, c.precondition(werr, "the object is absent, want version "+string(ifVersion))
		case s.IsTransient(err):
			if err := c.again(err); err != nil {
				return "", false, unknownOutcome(c, werr, err)
			}
		default:
			return "", false, unknownOutcome(c, werr, err)
		}
	}
}

// precondition is the error of a conditional write the read-back showed
// cannot land: werr if it is the server's, else a new ErrPrecondition.
func (c *call) precondition(werr error, why string) error {
	if errors.Is(werr, storage.ErrPrecondition) {
		return c.final(werr)
	}
	return fmt.Errorf("%s %s: %w: %s (read back after attempt %d failed with: %v)",
		c.op, c.path, storage.ErrPrecondition, why, c.failed, werr)
}
