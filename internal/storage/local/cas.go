// The one-pass rewrite, and what dirstore.Writer's CAS and exclusive create need.

package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// RewriteIf implements storage.Store: it hashes the current file while fn
// writes the new one to a temporary file beside it, renamed over the target only
// if the current bytes had ifVersion, under the same lock and with the same
// durability as PutIfVersion's compare-and-swap.
func (s *Store) RewriteIf(ctx context.Context, p string, ifVersion storage.Version, fn func(cur io.Reader, w io.Writer) error) error {
	// fn's own error comes back as it is, as a List callback's does.
	return storage.ListResult(s.rewriteIf(ctx, p, ifVersion, fn), func(err error) error {
		return s.errorf("rewrite-if", p, err)
	})
}

func (s *Store) rewriteIf(ctx context.Context, p string, ifVersion storage.Version, fn func(cur io.Reader, w io.Writer) error) error {
	if err := storage.CheckPath(p); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer s.HoldCAS()()
	cur, err := s.FS.OpenFile(ctx, p, true)
	if errors.Is(err, fs.ErrNotExist) {
		return dirstore.CheckVersion("", ifVersion)
	}
	if err != nil {
		return err
	}
	defer cur.Close()
	w, err := s.begin(p)
	if err != nil {
		return err
	}
	defer w.Done(ctx)
	// The digest of the current bytes is computed on another core while
	// fn works.
	v, err := dirstore.ReadDigested(ctx, cur, func(r io.Reader) error {
		if err := fn(r, w.f); err != nil {
			return &storage.CallbackError{Err: err}
		}
		return nil
	}, func(err error) error { return err })
	if err != nil {
		return err
	}
	if err := dirstore.CheckVersion(v, ifVersion); err != nil {
		return err
	}
	if err := w.Close(false); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return w.Rename(ctx)
}

// CreateNew implements dirstore.FS: the exclusive create without hard links,
// O_EXCL on the target, then the content in place.
func (d dirFS) CreateNew(ctx context.Context, p string, src *dirstore.DigestSource) error {
	root, err := d.openRoot(true)
	if err != nil {
		return err
	}
	c, _, err := walkChain(root, p, true, &d.dirs)
	if err != nil {
		return err
	}
	defer c.close()
	d.noteDirs(c)
	if err = createExclusive(ctx, c.parent(), c.base(), src); err != nil {
		d.prune(c, true)
		return err
	}
	return d.syncDirs(c, false)
}

func createExclusive(ctx context.Context, dir *os.Root, base string, src *dirstore.DigestSource) error {
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
