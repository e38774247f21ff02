// Conditional writes: create-once, compare-and-swap and the one-pass
// rewrite.

package local

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/distributor-dev/distributor/internal/parhash"
	"github.com/distributor-dev/distributor/internal/storage"
)

// putIfVersion is Put with PutIfVersion. It writes exactly size bytes of r,
// from its start, hashing them as they pass (the Version is their digest).
//
// With the zero Version it writes them to a temporary file, fsyncs it and
// renames it to the target with renameat2(RENAME_NOREPLACE), or hard-links
// it where the file system lacks that flag; either fails if any entry (even
// a dangling symbolic link) has that name: an atomic exclusive create that never exposes
// partial content, safe between processes and hosts sharing the directory.
// If the file system cannot hard-link, it falls back to an O_EXCL create of
// the target written in place (still exclusive, but a concurrent reader may
// briefly see a partial object). If the temporary file is gone when it is
// to be linked (the destination lock's holder swept it, see SweepTemp), it
// starts over with a new one, rewinding r, up to five times.
//
// With a non-zero Version it compares ifVersion with the Version of the
// current content (hashed as it streams) and, if they match, replaces the
// object by rename. The compare and the rename are two steps: calls on this
// Store are serialised, but between processes this is safe only because
// writers hold the destination lock. Versions are content digests, so
// writing back the same bytes yields the same Version.
//
// A failed condition returns an error matching storage.ErrPrecondition and
// leaves the object untouched; so does a reader that fails or yields more
// or fewer than size bytes (with its own error), and a context done before
// the commit.
func (s *Store) putIfVersion(ctx context.Context, p string, r io.Reader, size int64, ifVersion storage.Version) (storage.Version, error) {
	rs, err := storage.Seekable(r)
	if err != nil {
		return "", s.errorf("put-if", p, err)
	}
	src := storage.NewDigestSource(rs, size)
	if err := s.putIf(ctx, p, src, ifVersion); err != nil {
		return "", s.errorf("put-if", p, err)
	}
	return src.Version(), nil
}

func (s *Store) putIf(ctx context.Context, p string, src *storage.DigestSource, ifVersion storage.Version) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if src.Size() < 0 {
		return fmt.Errorf("negative size %d", src.Size())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.writes.RLock()
	defer s.writes.RUnlock()
	if ifVersion == "" {
		return s.create(ctx, p, src)
	}
	// Compare before writing anything, so that a failed condition leaves no
	// trace (not even a parent directory).
	s.cas.Lock()
	defer s.cas.Unlock()
	cur, err := s.currentVersion(ctx, p)
	if err != nil {
		return err
	}
	if err := storage.CheckVersion(cur, ifVersion); err != nil {
		return err
	}
	w, err := s.writeTemp(ctx, p, src)
	if err != nil {
		return err
	}
	defer w.cleanup()
	return w.rename(ctx)
}

// create is PutIfVersion with the zero Version. When the temporary file vanishes
// before it is linked, it starts over with a new one, up to
// storage.CreateAttempts times.
func (s *Store) create(ctx context.Context, p string, src *storage.DigestSource) error {
	return storage.RetryVanished(func() error { return s.createOnce(ctx, p, src) })
}

// createOnce writes the content to a temporary file and hard-links it to p.
func (s *Store) createOnce(ctx context.Context, p string, src *storage.DigestSource) error {
	w, err := s.writeTemp(ctx, p, src)
	if err != nil {
		return err
	}
	defer w.cleanup()
	if err := w.closeFile(); err != nil {
		return err
	}
	dir, base := w.c.parent(), w.c.base()
	if err := ctx.Err(); err != nil {
		return err
	}
	err = w.placeNew()
	if errors.Is(err, fs.ErrNotExist) {
		// Not an error matching storage.ErrNotExist: the object was not
		// missing, the temporary file was.
		return fmt.Errorf("%w (%v)", storage.ErrTempVanished, err)
	}
	if cannotLink(err) {
		err = createExclusive(ctx, dir, base, src)
	}
	return w.linked(err, "object exists")
}

// writeTemp is begin, then the content written to the temporary file, which
// stays open (rename or closeFile closes it). The caller defers cleanup.
func (s *Store) writeTemp(ctx context.Context, p string, src *storage.DigestSource) (*tempWriter, error) {
	w, err := s.begin(p)
	if err != nil {
		return nil, err
	}
	if err := src.CopyTo(ctx, w.f); err != nil {
		w.cleanup()
		return nil, err
	}
	return w, nil
}

// RewriteIf implements storage.Store: it reads the current file, hashing
// it, while fn writes the new one to a temporary file beside it, and renames
// that over the target only if the current bytes had Version ifVersion,
// under the same lock and with the same durability as PutIfVersion's
// compare-and-swap.
func (s *Store) RewriteIf(ctx context.Context, p string, ifVersion storage.Version, fn func(cur io.Reader, w io.Writer) error) error {
	err := s.rewriteIf(ctx, p, ifVersion, fn)
	var fnErr *rewriteFnError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fnErr):
		return fnErr.err
	}
	return s.errorf("rewrite-if", p, err)
}

// rewriteFnError carries the callback's error through rewriteIf unchanged.
type rewriteFnError struct{ err error }

func (e *rewriteFnError) Error() string { return e.err.Error() }

func (s *Store) rewriteIf(ctx context.Context, p string, ifVersion storage.Version, fn func(cur io.Reader, w io.Writer) error) error {
	if err := checkPath(p); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.writes.RLock()
	defer s.writes.RUnlock()
	s.cas.Lock()
	defer s.cas.Unlock()
	cur, err := s.open(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return storage.CheckVersion("", ifVersion)
	}
	if err != nil {
		return err
	}
	defer cur.Close()
	w, err := s.begin(p)
	if err != nil {
		return err
	}
	defer w.cleanup()
	// The digest of the current bytes is computed on another core while
	// fn works.
	sum := parhash.New(sha256.New())
	defer sum.Close()
	r := storage.ContextReader(ctx, io.TeeReader(cur, sum))
	if err := fn(r, w.f); err != nil {
		return &rewriteFnError{err}
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return err
	}
	if err := storage.CheckVersion(storage.SumVersion(sum.Sum()), ifVersion); err != nil {
		return err
	}
	return w.rename(ctx)
}

// currentVersion returns the Version of the object at p, or "" if there is
// none.
func (s *Store) currentVersion(ctx context.Context, p string) (storage.Version, error) {
	f, err := s.open(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	// Streamed: a large catalog is hashed without holding a second copy.
	h := sha256.New()
	if _, err := io.Copy(h, storage.ContextReader(ctx, f)); err != nil {
		return "", err
	}
	return storage.DigestVersion(h), nil
}

// createExclusive is the exclusive create for file systems without hard
// links: O_EXCL on the target, then the content in place.
func createExclusive(ctx context.Context, dir *os.Root, base string, src *storage.DigestSource) error {
	f, err := dir.OpenFile(base, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	err = f.Chmod(fileMode)
	if err == nil {
		err = src.CopyTo(ctx, f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		dir.Remove(base)
	}
	return err
}
