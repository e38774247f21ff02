package storage

import (
	"context"
	"errors"
	"io"
	"io/fs"
)

// Open is Store.Open on the DirFS.
func (d *DirWriter) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	f, err := d.FS.OpenFile(ctx, p, false)
	if err != nil {
		return nil, d.FS.Wrap("open", p, err)
	}
	return f, nil
}

// ReadVersioned is Store.ReadVersioned on the DirFS: the file is hashed
// on another core while fn decodes (every run reads its catalog, hundreds
// of MB for a large root), and what fn leaves unread is drained.
func (d *DirWriter) ReadVersioned(ctx context.Context, p string, fn func(io.Reader) error) (Version, error) {
	f, err := d.FS.OpenFile(ctx, p, true)
	if err != nil {
		return "", d.FS.Wrap("read", p, err)
	}
	defer f.Close()
	return ReadDigested(ctx, f, fn, func(err error) error { return d.FS.Wrap("read", p, err) })
}

// current returns the Version of the object at p, "" if there is none.
func (d *DirWriter) current(ctx context.Context, p string) (Version, error) {
	f, err := d.FS.OpenFile(ctx, p, true)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	// Streamed: a large catalog is hashed without holding a second copy,
	// on another core while the next bytes arrive.
	return ReadDigested(ctx, f, func(io.Reader) error { return nil }, func(err error) error { return err })
}
