// Conditional writes: create-once, exclusive create and compare-and-swap.

package sftp

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
	sftplib "github.com/pkg/sftp"
)

// putIfVersion is Put with PutIfVersion. It writes exactly size bytes of r,
// from its start, hashing them as they pass (the Version is their digest).
//
// With the zero Version it writes them to a temporary file, fsyncs it and
// hard-links it to the target with hardlink@openssh.com, which fails if any
// entry has that name: an atomic exclusive create that never exposes partial
// content, safe between processes and hosts. (SFTP v3 reports that failure
// as a generic SSH_FX_FAILURE, so an Lstat tells "exists" from other
// errors.) A server without hardlink@openssh.com gets an O_EXCL create of the
// target written in place: still exclusive, but a concurrent reader may
// briefly see a partial object. So does a server that announces the
// extension but answers the link with SSH_FX_OP_UNSUPPORTED: the create is
// redone that way (r rewound), and the connection uses it from then on (see
// conn.linkUnsupported). The exclusion probe's second create goes through
// the same O_EXCL path, so a server that ignores O_EXCL is refused before a
// writer trusts it.
//
// If the temporary file is gone when it is to be linked (the destination
// lock's holder swept it, see SweepTemp), it starts over with a new one, up
// to five times.
//
// With a non-zero Version it compares ifVersion with the Version of the
// current content (hashed as it streams) and, if they match, replaces the
// object by rename. The compare and the rename are two steps: calls on this
// Store are serialised, but between processes this is safe only because
// writers hold the destination lock.
//
// A reader that fails or yields more or fewer than size bytes fails the
// call and leaves the old object (or none).
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
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	s.writes.RLock()
	defer s.writes.RUnlock()
	if ifVersion == "" {
		if c.canLink() {
			err := s.create(ctx, c, p, src)
			if !errors.Is(err, errLinkUnsupported) {
				return err
			}
			// create left nothing behind: redo it without the link.
		}
		return s.createExclusive(ctx, c, p, src)
	}
	// Read and hash the current object while the new one is uploaded to a
	// temporary file beside it (both directions of the connection at once:
	// a large catalog costs one transfer time, not two), then compare and
	// rename. A failed condition removes the temporary file and any parent
	// directory it made, leaving no trace.
	s.cas.Lock()
	defer s.cas.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type current struct {
		v   storage.Version
		err error
	}
	compared := make(chan current, 1)
	go func() {
		v, err := s.currentVersion(cctx, c, p)
		compared <- current{v, err}
	}()
	w, werr := s.writeTemp(ctx, c, p, src)
	if werr == nil {
		defer w.cleanup(ctx)
	}
	// The condition's verdict comes first, as if it had been checked
	// before writing: a failed condition is the answer even when the
	// upload failed too (a symbolic link where a parent should be fails
	// both).
	cur := <-compared
	if cur.err == nil {
		if err := storage.CheckVersion(cur.v, ifVersion); err != nil {
			return err
		}
	}
	if werr != nil {
		return werr
	}
	if cur.err != nil {
		return cur.err
	}
	return w.rename(ctx)
}

// errLinkUnsupported is matched by create's error when the server answered
// hardlink@openssh.com with SSH_FX_OP_UNSUPPORTED (the connection is then
// marked: see conn.linkUnsupported). Nothing was created.
var errLinkUnsupported = errors.New("the server announces hardlink@openssh.com but does not support it")

// create is PutIfVersion with the zero Version on a server with
// hardlink@openssh.com. When the temporary file vanishes before it is
// linked, it starts over with a new one, up to storage.CreateAttempts times.
// An error matching errLinkUnsupported means the server refused the link
// as unsupported, having created nothing.
func (s *Store) create(ctx context.Context, c *conn, p string, src *storage.DigestSource) error {
	return storage.RetryVanished(func() error { return s.createOnce(ctx, c, p, src) })
}

// createOnce writes the content to a temporary file and hard-links it to p.
func (s *Store) createOnce(ctx context.Context, c *conn, p string, src *storage.DigestSource) error {
	w, err := s.writeTemp(ctx, c, p, src)
	if err != nil {
		return err
	}
	defer w.cleanup(ctx)
	// SFTP v3 reports a link onto an existing name as a generic failure.
	// Look: if the name exists, the condition failed. If the temporary
	// file is gone, a sweep removed it: start over. If the name is gone
	// again (its owner removed it between the link and the look, as a
	// released lock is), the link lost a race, not a permission: try again.
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := c.sftp.Link(w.tmp, w.target)
		if err == nil {
			break
		}
		if c.linkUnsupported(err) {
			return fmt.Errorf("%w: %w", errLinkUnsupported, err)
		}
		if _, serr := c.sftp.Lstat(w.target); serr == nil {
			return fmt.Errorf("%w: object exists", storage.ErrPrecondition)
		}
		if _, serr := c.sftp.Lstat(w.tmp); errors.Is(serr, fs.ErrNotExist) {
			// The sweep may have pruned the directories too.
			s.forgetParents(p)
			// Not an error matching storage.ErrNotExist: the object was
			// not missing, the temporary file was.
			return fmt.Errorf("%w (%v)", storage.ErrTempVanished, err)
		}
		if attempt < 5 && !errors.Is(err, fs.ErrPermission) {
			continue
		}
		return fmt.Errorf("hard-link into place: %w", err)
	}
	w.published = true
	c.sftp.Remove(w.tmp)
	return nil
}

// currentVersion returns the Version of the object at p, or "" if there is
// none.
func (s *Store) currentVersion(ctx context.Context, c *conn, p string) (storage.Version, error) {
	f, size, err := s.openSized(c, p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	// Streamed: a large catalog is hashed without holding a second copy,
	// on another core while the next bytes arrive.
	h := parhash.New(sha256.New())
	defer h.Close()
	if _, err := io.Copy(h, storage.ContextReader(ctx, bufferedReader(f, size))); err != nil {
		return "", err
	}
	return storage.SumVersion(h.Sum()), nil
}

// createExclusive is the exclusive create for servers without a usable
// hardlink@openssh.com: O_EXCL on the target, then the content in place.
func (s *Store) createExclusive(ctx context.Context, c *conn, p string, src *storage.DigestSource) error {
	created, err := s.mkdirs(c, p)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		s.removeDirs(c, created)
		return err
	}
	target := s.full(p)
	var f *sftplib.File
	for attempt := 1; ; attempt++ {
		if f, err = c.sftp.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL); err == nil {
			break
		}
		// SFTP v3 reports a taken name as a generic failure: look. If the
		// name is gone again (its holder released it between the create
		// and the look, as a lock is), the create lost a race: try again.
		_, serr := c.sftp.Lstat(target)
		if serr == nil {
			return fmt.Errorf("%w: object exists", storage.ErrPrecondition)
		}
		if errors.Is(serr, fs.ErrNotExist) && attempt < 5 && !errors.Is(err, fs.ErrPermission) {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			continue
		}
		s.removeDirs(c, created)
		return err
	}
	err = src.CopyTo(ctx, f)
	if err == nil && c.fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.sftp.Remove(target)
		s.removeDirs(c, created)
	}
	return err
}
