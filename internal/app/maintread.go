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
// does not grow with it (see docs/design.md, "Maintenance in constant
// memory"): the catalog streams once per pass, the listing alongside it.

// maintCatalog is a root's valid catalog as a maintenance command reads it:
// not held, but streamed again, in path order, for each pass.
type maintCatalog struct {
	st      storage.Store
	Header  catalog.Header
	Count   int
	version storage.Version // every pass checks it
	// canonical: every record is in the catalog's layout
	// (txn.Change.BaseCanonical).
	canonical bool
	// copy holds the catalog's bytes as first read (nil when the command
	// holds the lock on a store that rewrites in place: no other writer
	// can change what each pass reads again), or, for a catalog whose
	// records are not sorted by path, its records encoded sorted (then
	// sorted is false).
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

// baseCopy returns the copy of the stored bytes to apply an edit to (nil
// for none).
func (c *maintCatalog) baseCopy() *txn.Spool {
	if c.sorted {
		return c.copy
	}
	return nil
}

// each calls fn for every record in path order; an error from fn stops the
// pass and is returned as is.
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
// reused Output: visit copies what it keeps), and comes back as c, with a
// copy of its bytes with keepCopy. Any other document is read whole
// (txn.ReadCatalog); State.Catalog is then set only for a valid catalog
// whose records are not sorted by path.
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
		return catalog.State{}, "", nil, err // the store's error names the root and the file
	}
	// Legacy, future, invalid or unsorted: classify the whole document.
	s, ver, err := txn.ReadCatalog(ctx, st)
	return s, ver, nil, err
}

// readMaintCatalog is streamCatalog for a maintenance command. With
// keepCopy, the bytes read are kept for the later passes: they spare a
// remote root a download, and a command without the lock reads the one
// version it classified whatever a concurrent run commits. A catalog whose
// records are not sorted by path (valid, but never written by distributor)
// is encoded sorted into a copy that the passes read.
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

// mergeListing streams the root's listing of objects alongside the records
// of c (nil: no catalog), both in path order, and calls fn once for every
// path either holds, with its record and its listing entry (nil for
// absent). Memory follows the store's listing page, not the root.
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
	// unrecorded reports the listing entries before o (nil: all of them).
	unrecorded := func(o *catalog.Output) error {
		for cur != nil && (o == nil || cur.Path < o.Path) {
			if err := fn(nil, cur); err != nil {
				return err
			}
			if err := advance(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := advance(); err != nil {
		return err
	}
	if c != nil {
		err := c.each(ctx, func(o *catalog.Output) error {
			if err := unrecorded(o); err != nil {
				return err
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
	return unrecorded(nil)
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
