// What dirstore.Writer's reads, compare-and-swap and exclusive create
// need of SFTP.

package sftp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
	sftplib "github.com/pkg/sftp"
)

// readBuffer is the read size of a file read whole (ReadVersioned, the
// compare of PutIfVersion): the client splits a read this large into concurrent
// requests, so a large object streams at the link's speed.
const readBuffer = 1 << 20

// OpenFile implements dirstore.FS: each Read checks ctx, and Close stops
// watching it. A file read whole is read in reads of up to readBuffer bytes.
func (d dirFS) OpenFile(ctx context.Context, p string, whole bool) (io.ReadCloser, error) {
	c, err := d.client(ctx)
	if err != nil {
		return nil, err
	}
	stop := watch(ctx, c)
	f, size, err := d.openSized(c, p)
	if err != nil {
		stop()
		return nil, err
	}
	r := io.Reader(f)
	if whole { // no larger than the file needs: a small file takes one request
		r = bufio.NewReaderSize(f, int(min(max(size+1, 4096), readBuffer)))
	}
	return &reader{Reader: storage.ContextReader(ctx, r), f: f, stop: stop}, nil
}

// reader is the io.ReadCloser OpenFile returns.
type reader struct {
	io.Reader
	f    *sftplib.File
	stop func()
}

// Close closes the file, and then stops the watch: a close request a
// stalled server does not answer is cut storage.AnswerGrace after a cancel too.
func (r *reader) Close() error {
	err := r.f.Close()
	r.stop()
	return err
}

// CreateNew implements dirstore.FS, the exclusive create without a usable
// hardlink@openssh.com (see conn.linkUnsupported): O_EXCL on the target, then the
// content in place. The exclusion probe's second create goes through it too, so
// a server that ignores O_EXCL is refused before a writer trusts it.
func (d dirFS) CreateNew(ctx context.Context, p string, src *dirstore.DigestSource) error {
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
		s.dirs.Undo(created, c.sftp.RemoveDirectory)
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
		s.dirs.Undo(created, c.sftp.RemoveDirectory)
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
		s.dirs.Undo(created, c.sftp.RemoveDirectory)
	}
	return err
}
