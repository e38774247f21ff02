package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// This file holds how the maintenance commands read a root in memory that
// does not grow with it: the catalog streams through the catalog's one
// reader (catalog.Scan) once per pass, and the root's listing streams
// alongside it as a merge in path order (see docs/design.md, "Maintenance
// in constant memory").

// maintCatalog is a root's valid catalog as a maintenance command reads it:
// not held, but streamed again for each pass over its records, in path
// order.
type maintCatalog struct {
	st storage.Store
	// Header and Count are the catalog's.
	Header catalog.Header
	Count  int
	// version is the catalog's version, which every pass checks.
	version storage.Version
	// canonical says every record is in the catalog's layout (an edit is
	// spliced into its bytes: txn.Change.BaseCanonical).
	canonical bool
	// copy holds the catalog's bytes as first read (nil when the command
	// holds the lock on a store that rewrites in place: each pass reads
	// the store again, which no other writer can change), or for a valid
	// catalog whose records are not sorted by path, its records encoded
	// sorted (then sorted is false).
	copy   *txn.Spool
	sorted bool
}

// close releases the catalog's copy, if any.
func (c *maintCatalog) close() {
	if c != nil && c.copy != nil {
		c.copy.Close()
		c.copy = nil
	}
}

// baseCopy returns the copy of the catalog's bytes to apply an edit to (nil
// when there is none, or it is not the stored bytes).
func (c *maintCatalog) baseCopy() *txn.Spool {
	if c.sorted {
		return c.copy
	}
	return nil
}

// each calls fn for every record in path order, streaming the catalog once.
// An error from fn stops the pass and is returned as is.
func (c *maintCatalog) each(ctx context.Context, fn func(*catalog.Output) error) error {
	scan := func(r io.Reader) error {
		_, _, err := catalog.Scan(r, fn)
		return err
	}
	if c.copy != nil {
		r, err := c.copy.Open()
		if err != nil {
			return err
		}
		return scan(r)
	}
	ver, err := txn.StreamCatalog(ctx, c.st, scan)
	if err != nil {
		return err
	}
	if ver != c.version {
		return fmt.Errorf("%s at %s changed while it was being read (a writer is at work): try again", catalog.FileName, c.st)
	}
	return nil
}

// streamCatalog reads and classifies a root's catalog: a valid one streams
// through catalog.ScanCanonical, which calls visit for each record (one
// reused Output: visit copies what it keeps), and
// comes back as c (State.Catalog stays nil), with a copy of its bytes with
// keepCopy. Any other document is read whole (txn.ReadCatalog); State.Catalog
// is then set only for a valid catalog whose records are not sorted by path.
func streamCatalog(ctx context.Context, st storage.Store, keepCopy bool, visit func(*catalog.Output) error) (catalog.State, storage.Version, *maintCatalog, error) {
	c := &maintCatalog{st: st, sorted: true}
	if keepCopy {
		c.copy = txn.NewSpool()
	}
	var scanErr error
	ver, err := txn.StreamCatalog(ctx, st, func(r io.Reader) error {
		if c.copy != nil {
			r = io.TeeReader(r, c.copy)
		}
		c.Header, c.Count, c.canonical, scanErr = catalog.ScanCanonical(r, visit)
		return nil // the store drains the rest; the document is classified below
	})
	if err == nil && scanErr == nil {
		c.version = ver
		return catalog.State{Status: catalog.StatusCatalog, SchemaVersion: catalog.SchemaVersion}, ver, c, nil
	}
	c.close()
	switch {
	case errors.Is(err, storage.ErrNotExist) && !errors.Is(err, storage.ErrNotObject):
		return catalog.State{Status: catalog.StatusNone}, "", nil, nil
	case err != nil && !errors.Is(err, storage.ErrNotObject):
		return catalog.State{}, "", nil, fmt.Errorf("read %s at %s: %w", catalog.FileName, st, err)
	}
	// Legacy, future, invalid or unsorted: classify the whole document.
	s, ver, err := txn.ReadCatalog(ctx, st)
	return s, ver, nil, err
}

// readMaintCatalog is streamCatalog for a maintenance command. With
// keepCopy, the bytes read are kept (txn.Spool) for the later passes: from
// a remote root, which they spare a download, and for a command without
// the lock, whose passes then read the one version it classified whatever
// a concurrent run commits meanwhile. A valid catalog whose records are not
// sorted by path (never written by distributor, but valid) cannot stream in
// path order: its records are encoded sorted into a copy that the passes
// read.
func readMaintCatalog(ctx context.Context, st storage.Store, keepCopy bool) (catalog.State, storage.Version, *maintCatalog, error) {
	s, ver, c, err := streamCatalog(ctx, st, keepCopy, func(*catalog.Output) error { return nil })
	if err != nil || s.Catalog == nil {
		return s, ver, c, err
	}
	sorted, err := catalog.Encode(s.Catalog)
	if err != nil {
		return catalog.State{}, "", nil, fmt.Errorf("read %s at %s: %w", catalog.FileName, st, err)
	}
	c = &maintCatalog{st: st, Header: s.Catalog.Header(), Count: len(s.Catalog.Outputs), version: ver, copy: txn.NewSpool()}
	if _, err := c.copy.Write(sorted); err != nil {
		c.close()
		return catalog.State{}, "", nil, err
	}
	s.Catalog = nil
	return s, ver, c, nil
}

// errListingOrder is a listing that breaks storage.Store.List's path order.
var errListingOrder = errors.New("the listing is not in byte-wise path order")

// listed is one object of a root's listing.
type listed struct {
	Path string
	Size int64
}

// mergeListing streams the root's listing of objects (directory entries
// left out) alongside the records of c (nil: no catalog), both in path
// order, and calls fn once for every path either holds: with its record
// (nil when the catalog does not record it) and its listing entry (nil
// when storage does not list it). Memory follows the store's listing page,
// not the root.
func mergeListing(ctx context.Context, st storage.Store, c *maintCatalog, fn func(o *catalog.Output, l *listed) error) error {
	next, stop := iter.Pull2(listObjects(ctx, st))
	defer stop()
	var cur *listed
	advance := func() error {
		info, err, ok := next()
		switch {
		case !ok:
			cur = nil
		case err != nil:
			return fmt.Errorf("list %s: %w", st, err)
		case cur != nil && info.Path <= cur.Path:
			return fmt.Errorf("list %s: %q after %q: %w", st, info.Path, cur.Path, errListingOrder)
		default:
			cur = &listed{Path: info.Path, Size: info.Size}
		}
		return nil
	}
	if err := advance(); err != nil {
		return err
	}
	if c != nil {
		err := c.each(ctx, func(o *catalog.Output) error {
			for cur != nil && cur.Path < o.Path {
				if err := fn(nil, cur); err != nil {
					return err
				}
				if err := advance(); err != nil {
					return err
				}
			}
			if cur == nil || cur.Path != o.Path {
				return fn(o, nil)
			}
			if err := fn(o, cur); err != nil {
				return err
			}
			return advance()
		})
		if err != nil {
			return err
		}
	}
	for cur != nil {
		if err := fn(nil, cur); err != nil {
			return err
		}
		if err := advance(); err != nil {
			return err
		}
	}
	return nil
}

// listObjects is the root's listing of objects as a sequence; a failed
// listing ends it with its error.
func listObjects(ctx context.Context, st storage.Store) iter.Seq2[storage.Info, error] {
	return func(yield func(storage.Info, error) bool) {
		errStop := errors.New("stop")
		err := st.List(ctx, "", func(info storage.Info) error {
			if info.Dir {
				return nil // maintenance looks at objects only
			}
			if !yield(info, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			yield(storage.Info{}, err)
		}
	}
}
