package txn

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage"
)

// spoolAt is the size above which an encoded catalog is spooled to a
// temporary file instead of memory, so that memory does not grow with the
// catalog.
const spoolAt = 4 << 20

// Spool holds a document's bytes, in memory while small and in a
// temporary file beyond a few MB, so that memory does not grow with it. A
// reader that will apply an edit to the catalog it read keeps a Spool of it
// (Change.BaseCopy), which spares a second download from a remote root.
type Spool = encoded

// NewSpool returns an empty Spool. Close removes its file.
func NewSpool() *Spool { return newEncoded() }

// Open returns the spooled bytes from their start; they stay valid until
// the next Open or Close.
func (e *encoded) Open() (io.Reader, error) { return e.reader() }

// Close releases the spool's temporary file, if any.
func (e *encoded) Close() { e.close() }

// encoded is a catalog document ready to write: held in memory while small,
// spooled to a temporary file beyond spoolAt.
type encoded struct {
	mem  bytes.Buffer
	file *os.File
	size int64
	sum  hash.Hash
}

func newEncoded() *encoded { return &encoded{sum: sha256.New()} }

// Write implements io.Writer.
func (e *encoded) Write(p []byte) (int, error) {
	e.sum.Write(p)
	e.size += int64(len(p))
	if e.file == nil && e.mem.Len()+len(p) > spoolAt {
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
	if e.file != nil {
		if _, err := e.file.Write(p); err != nil {
			return 0, fmt.Errorf("spool catalog: %w", err)
		}
		return len(p), nil
	}
	return e.mem.Write(p)
}

// digest is the sha256 of the document.
func (e *encoded) digest() string { return fmt.Sprintf("%x", e.sum.Sum(nil)) }

// reader returns the document from its start.
func (e *encoded) reader() (io.ReadSeeker, error) {
	if e.file == nil {
		return bytes.NewReader(e.mem.Bytes()), nil
	}
	if _, err := e.file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("spool catalog: %w", err)
	}
	return e.file, nil
}

// close removes the spool file, if any.
func (e *encoded) close() {
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

// putCatalog writes the encoded document with compare-and-swap against
// base.
func putCatalog(ctx context.Context, st storage.Store, doc *encoded, base storage.Version) error {
	r, err := doc.reader()
	if err != nil {
		return err
	}
	_, err = st.PutIfStream(ctx, catalog.FileName, r, doc.size, base)
	return err
}

// encodeEdit applies e to the root's catalog, which must still be at
// version base ("" for none), streaming it once. A catalog whose records
// are not sorted (valid, but never written by distributor) is applied in
// memory instead.
func encodeEdit(ctx context.Context, st storage.Store, e *catalog.Edit, base storage.Version, baseCopy *Spool) (*encoded, error) {
	doc := newEncoded()
	if base == "" || e.Fresh {
		if _, err := e.ApplyTo(nil, doc); err != nil {
			doc.close()
			return nil, err
		}
		return doc, nil
	}
	if baseCopy != nil {
		r, err := baseCopy.Open()
		if err == nil {
			_, err = e.ApplyTo(r, doc)
		}
		if err == nil {
			return doc, nil
		}
		doc.close()
		if !errors.Is(err, catalog.ErrUnsorted) {
			return nil, err
		}
		return encodeEditInMemory(ctx, st, e, base)
	}
	ver, err := StreamCatalog(ctx, st, func(r io.Reader) error {
		_, err := e.ApplyTo(r, doc)
		return err
	})
	if err == nil && ver != base {
		err = fmt.Errorf("%s changed since it was read (another writer?): %w", catalog.FileName, storage.ErrPrecondition)
	}
	if errors.Is(err, catalog.ErrUnsorted) {
		doc.close()
		return encodeEditInMemory(ctx, st, e, base)
	}
	if err != nil {
		doc.close()
		return nil, err
	}
	return doc, nil
}

func encodeEditInMemory(ctx context.Context, st storage.Store, e *catalog.Edit, base storage.Version) (*encoded, error) {
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
	next, err := c.Apply(e)
	if err != nil {
		return nil, err
	}
	out, err := catalog.Encode(next)
	if err != nil {
		return nil, err
	}
	doc := newEncoded()
	doc.Write(out)
	return doc, nil
}

// currentCatalog streams the root's catalog once and returns its version,
// the sha256 of its bytes, and its records at the given paths (none for a
// missing catalog or one that is not a valid catalog).
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
		_, err = io.Copy(sum, r)
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
