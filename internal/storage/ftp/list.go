package ftp

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	ftplib "github.com/jlaffaye/ftp"

	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// Walk implements dirstore.FS: one listing per directory, each on a
// connection of the pool (List's fn runs without one); a sweep that
// removes proves the server first.
func (d dirFS) Walk(ctx context.Context, removes bool) (dirstore.Tree, func(), error) {
	if removes {
		if err := d.proven(ctx); err != nil {
			return nil, nil, err
		}
	}
	return dir{d.Store, d.root}, func() {}, nil
}

// dir is the store's directory tree as dirstore.ListTree and
// dirstore.SweepTree walk it, and its directory at the server path path.
type dir struct {
	s    *Store
	path string
}

// OpenDir implements dirstore.Tree: a missing directory shows as such in
// its listing.
func (d dir) OpenDir(_ context.Context, p string) (dirstore.TreeDir, error) {
	return dir{d.s, d.s.full(p)}, nil
}

// PruneDir implements dirstore.Tree (see dirstore.Dirs.Prune).
func (d dir) PruneDir(ctx context.Context, p string, parents bool) {
	c, err := d.s.acquire(ctx)
	if err != nil {
		return
	}
	defer d.s.release(c)
	d.s.dirs.Prune(d.s.full(p), parents, false, rmdir(c))
}

// Entries implements dirstore.TreeDir: MLSD, or CWD and LIST. Guards are
// left out; one whose file is missing shows as that file, empty (as a
// read sees it).
func (d dir) Entries(ctx context.Context, prefix string) ([]fs.FileInfo, error) {
	c, err := d.s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer d.s.release(c)
	entries, err := list(c, d.path)
	if refused(err) {
		return nil, fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
	} else if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var guarded []fs.FileInfo
	fis := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		name := e.Name
		seen[name] = true
		switch {
		case name == "." || name == ".." || name == "" || strings.Contains(name, "/"):
		case strings.HasPrefix(name, GuardPrefix):
			if name = strings.TrimPrefix(name, GuardPrefix); strings.HasPrefix(name, prefix) {
				guarded = append(guarded, info{&ftplib.Entry{Name: name, Time: e.Time}})
			}
		case strings.HasPrefix(name, prefix):
			fis = append(fis, info{e})
		}
	}
	for _, g := range guarded {
		if !seen[g.Name()] {
			fis = append(fis, g)
		}
	}
	return fis, nil
}

// list lists the server directory dir: MLSD, or CWD and LIST (whose
// argument some servers read as a pattern and options).
func list(c *conn, dir string) ([]*ftplib.Entry, error) {
	if c.mlst {
		entries, err := c.sc.List(dir)
		return entries, c.do(err)
	}
	if err := c.do(c.sc.ChangeDir(dir)); err != nil {
		return nil, err
	}
	entries, err := c.sc.List("")
	return entries, c.do(err)
}

// Sub implements dirstore.TreeDir.
func (d dir) Sub(_ context.Context, name string) (dirstore.TreeDir, error) {
	return dir{d.s, path.Join(d.path, name)}, nil
}

// Remove implements dirstore.TreeDir.
func (d dir) Remove(ctx context.Context, name string) error {
	c, err := d.s.acquire(ctx)
	if err != nil {
		return err
	}
	defer d.s.release(c)
	if err := c.do(c.sc.Delete(path.Join(d.path, name))); err != nil && !refused(err) {
		return err
	}
	return nil
}

// Close implements dirstore.TreeDir.
func (dir) Close() {}

// info is a listed entry as an fs.FileInfo.
type info struct{ e *ftplib.Entry }

func (i info) Name() string       { return i.e.Name }
func (i info) Size() int64        { return int64(i.e.Size) }
func (i info) ModTime() time.Time { return i.e.Time }
func (i info) IsDir() bool        { return i.e.Type == ftplib.EntryTypeFolder }
func (i info) Sys() any           { return nil }

func (i info) Mode() fs.FileMode {
	switch i.e.Type {
	case ftplib.EntryTypeFolder:
		return fs.ModeDir | 0o755
	case ftplib.EntryTypeLink:
		return fs.ModeSymlink | 0o777
	}
	return 0o644
}
