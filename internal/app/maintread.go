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

// maintCatalog is a valid catalog as maintenance reads it, streamed again in
// path order for each pass (docs/design.md, "Maintenance in constant memory").
type maintCatalog struct {
	st        storage.Store
	Header    catalog.Header
	Count     int
	version   storage.Version // every pass checks it
	canonical bool            // txn.Change.BaseCanonical
	// copy holds the bytes first read (nil under the lock on a store that
	// rewrites in place: no writer can change them), or, for records not
	// sorted by path, the records encoded sorted (sorted is then false).
	copy   *txn.Spool
	sorted bool
}

func (c *maintCatalog) close() {
	if c != nil && c.copy != nil {
		c.copy.Close()
		c.copy = nil
	}
}

// baseCopy returns the stored bytes to apply an edit to (nil for none).
func (c *maintCatalog) baseCopy() *txn.Spool {
	if c.sorted {
		return c.copy
	}
	return nil
}

// each calls fn for every record in path order; fn's error stops it, as is.
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
// through ScanCanonical to visit (one reused Output: visit copies what it
// keeps) and comes back as c, with its bytes with keepCopy. Anything else is
// read whole; State.Catalog is then set only for a valid unsorted catalog.
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

// readMaintCatalog is streamCatalog for maintenance. With keepCopy the bytes
// are kept: they spare a remote root a download, and without the lock every
// pass reads the version classified whatever a concurrent run commits. An
// unsorted catalog (never written by distributor) is encoded sorted into the copy.
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

var errListingOrder = errors.New("the listing is not in byte-wise path order")

// mergeListing streams the listing alongside c's records (c nil: none), both
// in path order, calling fn once per path with its record and listing entry
// (nil when absent). Memory follows the listing page, not the root.
func mergeListing(ctx context.Context, st storage.Store, c *maintCatalog, fn func(o *catalog.Output, l *storage.Info) error) error {
	next, stop := iter.Pull2(listObjects(ctx, st))
	defer stop()
	var cur *storage.Info
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
			cur = &info
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

// listObjects is the listing of objects; a failure ends it with its error.
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
