package txn

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/parhash"
	"github.com/distributor-dev/distributor/internal/storage"
)

// spoolAt is the size beyond which a Spool moves to a temporary file.
const spoolAt = 4 << 20

// Spool holds a document's bytes, in memory while small and in a temporary
// file beyond spoolAt: a catalog document to write (newEncoded), or the
// catalog a reader that will edit it keeps (Change.BaseCopy), sparing a
// second download.
type Spool struct {
	mem  bytes.Buffer
	file *os.File
	size int64
	sum  *parhash.Hash // nil unless newEncoded
}

// NewSpool returns an empty, unhashed Spool. Close removes its file.
func NewSpool() *Spool { return &Spool{} }

// newEncoded returns an empty document, hashed on another core as written.
func newEncoded() *Spool { return &Spool{sum: parhash.New(sha256.New())} }

// Write appends p, moving the bytes to a temporary file beyond spoolAt.
func (e *Spool) Write(p []byte) (int, error) {
	if e.sum != nil {
		e.sum.Write(p)
	}
	e.size += int64(len(p))
	if e.file == nil {
		if e.mem.Len()+len(p) <= spoolAt {
			return e.mem.Write(p)
		}
		f, err := os.CreateTemp("", "distributor-catalog-*")
		if err != nil {
			return 0, fmt.Errorf("spool catalog: %w", err)
		}
		e.file = f
		if _, err := f.Write(e.mem.Bytes()); err != nil {
			return 0, fmt.Errorf("spool catalog: %w", err)
		}
		e.mem = bytes.Buffer{}
	}
	if _, err := e.file.Write(p); err != nil {
		return 0, fmt.Errorf("spool catalog: %w", err)
	}
	return len(p), nil
}

// Open returns the bytes from their start, valid until the next Open or Close.
func (e *Spool) Open() (io.ReadSeeker, error) {
	if e.file == nil {
		return bytes.NewReader(e.mem.Bytes()), nil
	}
	if _, err := e.file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spool catalog: %w", err)
	}
	return e.file, nil
}

// Close releases the temporary file, if any.
func (e *Spool) Close() {
	if e.sum != nil {
		e.sum.Close()
	}
	if e.file != nil {
		e.file.Close()
		os.Remove(e.file.Name())
	}
}

// StreamCatalog streams the root's catalog to fn and returns its Version.
// A missing catalog yields storage.ErrNotExist before fn is called.
func StreamCatalog(ctx context.Context, st storage.Store, fn func(io.Reader) error) (storage.Version, error) {
	return st.ReadVersioned(ctx, catalog.FileName, fn)
}

// putEdit applies e to the root's catalog, still at ch.Base, and writes it
// with compare-and-swap against ch.Base under the fence: in one pass on a
// store that rewrites (Properties.Rewrite), else streamed from the old one
// (encodeEdit); old records are spliced when in the catalog's layout. It
// remembers the digest of what it tried to write (t.catalogSum), so that a
// cleanup can recognise its own write whose answer was lost. A fence error
// is returned as a *fencedError.
//
// A rewrite checks the fence after the last byte, before the store
// compares versions and renames. It leaves t.catalogSum unset: a local
// rename does not lose its answer, except in a failure after the rename
// (the directory's fsync), which the cleanup treats as a catalog it cannot
// account for (the journal stays; the next writer's recovery finds the
// writes recorded).
func (t *Txn) putEdit(ctx context.Context, e *catalog.Edit, ch *Change) error {
	t.catalogSum = ""
	if t.st.Properties().Rewrite && ch.Base != "" && !e.Fresh {
		err := t.st.RewriteIf(ctx, catalog.FileName, ch.Base, func(cur io.Reader, w io.Writer) error {
			if _, err := e.ApplyTo(cur, w, ch.BaseCanonical); err != nil {
				return err
			}
			if err := t.lk.Fence(); err != nil {
				return &fencedError{err}
			}
			return nil
		})
		if !errors.Is(err, catalog.ErrUnsorted) {
			return err
		}
		// Unsorted records (never written by distributor): edit in memory below.
	}
	doc, err := encodeEdit(ctx, t.st, e, ch.Base, ch.BaseCopy, ch.BaseCanonical)
	if err != nil {
		return err
	}
	defer doc.Close()
	t.catalogSum = fmt.Sprintf("%x", doc.sum.Sum())
	if err := t.lk.Fence(); err != nil {
		return &fencedError{err}
	}
	r, err := doc.Open()
	if err != nil {
		return err
	}
	o := storage.IfVersion(ch.Base)
	o.SHA256 = "sha256:" + t.catalogSum // S3 signs it: no second pass over the catalog
	_, err = t.st.Put(ctx, catalog.FileName, r, doc.size, o)
	return err
}

// fencedError is the fence failing during a catalog write.
type fencedError struct{ err error }

func (e *fencedError) Error() string { return e.err.Error() }
func (e *fencedError) Unwrap() error { return e.err }

// encodeEdit applies e to the root's catalog, which must still be at
// version base ("" for none), streaming it once (from baseCopy when set),
// spliced when canonical. An unsorted catalog (valid, but never written by
// distributor) is read whole and sorted first.
func encodeEdit(ctx context.Context, st storage.Store, e *catalog.Edit, base storage.Version, baseCopy *Spool, canonical bool) (*Spool, error) {
	doc := newEncoded()
	var err error
	switch {
	case base == "" || e.Fresh:
		_, err = e.ApplyTo(nil, doc, false)
	case baseCopy != nil:
		var r io.Reader
		if r, err = baseCopy.Open(); err == nil {
			_, err = e.ApplyTo(r, doc, canonical)
		}
	default:
		var ver storage.Version
		ver, err = StreamCatalog(ctx, st, func(r io.Reader) error {
			_, err := e.ApplyTo(r, doc, canonical)
			return err
		})
		if err == nil && ver != base {
			err = fmt.Errorf("%s changed since it was read (another writer?): %w", catalog.FileName, storage.ErrPrecondition)
		}
	}
	if errors.Is(err, catalog.ErrUnsorted) {
		doc.Close()
		doc = newEncoded()
		var sorted []byte
		if sorted, err = sortedCatalog(ctx, st, base); err == nil {
			_, err = e.ApplyTo(bytes.NewReader(sorted), doc, false)
		}
	}
	if err != nil {
		doc.Close()
		return nil, err
	}
	return doc, nil
}

// sortedCatalog returns the root's catalog (still at version base) encoded with records sorted.
func sortedCatalog(ctx context.Context, st storage.Store, base storage.Version) ([]byte, error) {
	data, ver, err := st.Get(ctx, catalog.FileName)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", catalog.FileName, err)
	}
	if ver != base {
		return nil, fmt.Errorf("%s changed since it was read (another writer?): %w", catalog.FileName, storage.ErrPrecondition)
	}
	c, err := catalog.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", catalog.FileName, err)
	}
	return catalog.Encode(c)
}

// currentCatalog streams the root's catalog once and returns its version,
// the sha256 of its bytes, and its records at paths (none unless valid).
func currentCatalog(ctx context.Context, st storage.Store, paths map[string]bool) (storage.Version, string, map[string]*catalog.Output, error) {
	recorded := map[string]*catalog.Output{}
	sum := sha256.New()
	unsorted := false
	ver, err := StreamCatalog(ctx, st, func(r io.Reader) error {
		_, _, err := catalog.Scan(io.TeeReader(r, sum), func(o *catalog.Output) error {
			if paths[o.Path] {
				recorded[o.Path] = o
			}
			return nil
		})
		if err == nil {
			return nil
		}
		// Not a valid sorted catalog: hash the rest (the tee saw what
		// the scan read), then look again below.
		unsorted = errors.Is(err, catalog.ErrUnsorted)
		recorded = map[string]*catalog.Output{}
		_, err = storage.Hash(ctx, sum, r)
		return err
	})
	switch {
	case errors.Is(err, storage.ErrNotExist) && !errors.Is(err, storage.ErrNotObject):
		return "", "", recorded, nil
	case err != nil:
		return "", "", nil, err
	}
	if unsorted {
		data, v, err := st.Get(ctx, catalog.FileName)
		if err != nil {
			return "", "", nil, err
		}
		if v != ver {
			return "", "", nil, fmt.Errorf("%s changed while it was read", catalog.FileName)
		}
		if s := catalog.Read(data); s.Status == catalog.StatusCatalog {
			for p, o := range s.Catalog.Index() {
				if paths[p] {
					recorded[p] = o
				}
			}
		}
	}
	return ver, fmt.Sprintf("%x", sum.Sum(nil)), recorded, nil
}
