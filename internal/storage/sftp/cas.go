// What storage.DirWriter's compare-and-swap and exclusive create need of
// SFTP.

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

// Current implements storage.DirFS.
func (d dirFS) Current(ctx context.Context, p string) (storage.Version, error) {
	c, err := d.client(ctx)
	if err != nil {
		return "", err
	}
	defer watch(ctx, c)()
	f, size, err := d.openSized(c, p)
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

// CreateNew implements storage.DirFS, the exclusive create of a server
// without a usable hardlink@openssh.com (see conn.linkUnsupported): O_EXCL
// on the target, then the content in place. The exclusion probe's second
// create goes through it too, so a server that ignores O_EXCL is refused
// before a writer trusts it.
func (d dirFS) CreateNew(ctx context.Context, p string, src *storage.DigestSource) error {
	c, err := d.client(ctx)
	if err != nil {
		return err
	}
	defer watch(ctx, c)()
	s := d.Store
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
			return fmt.Errorf("%w (%v)", fs.ErrExist, err)
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
