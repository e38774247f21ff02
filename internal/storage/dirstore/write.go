// Package dirstore is the kit of the directory stores (local disk, SFTP,
// FTP), whose root is a directory and objects are files. A store implements
// FS, Temp, Tree and TreeDir on its file system and embeds a Writer, which
// gives it Put, Stage, Open, Get, ReadVersioned, List (ListTree) and
// SweepTemp (SweepTree), and the defaults of what it does not do; Book
// records which directories its writes created, so cleanups remove only
// those. Versions are content digests ("sha256:<hex>").
package dirstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/distributor-dev/distributor/internal/storage"
)

// FS is the file system of a directory store, as Writer writes to it.
type FS interface {
	fmt.Stringer
	// Wrap wraps err, the failure of the operation op on the store path
	// p, with the store's name (and, where the store has them, hints).
	Wrap(op, p string, err error) error
	// Temp creates the missing parent directories of the store path p
	// (noting them in the store's Book) and a new temporary file
	// beside p. deferred: the write is a Put or Stage, whose durability
	// a store may defer to Sync.
	Temp(ctx context.Context, p string, deferred bool) (Temp, error)
	// OpenFile opens the regular file at p for reading, else an error
	// matching storage.ErrNotExist (and ErrNotObject for an entry that is
	// not a regular file). whole: the caller reads the file to its end
	// (ReadVersioned, a compare), so the store may read ahead.
	OpenFile(ctx context.Context, p string, whole bool) (io.ReadCloser, error)
	// CanLink reports whether an exclusive create may try Temp.Link
	// (it can still fail with errors.ErrUnsupported).
	CanLink(ctx context.Context) bool
	// CreateNew is the exclusive create of a file system that cannot
	// link: an O_EXCL create of p written in place (a concurrent reader
	// may see it partial), fs.ErrExist when p is taken.
	CreateNew(ctx context.Context, p string, src *DigestSource) error
	// Walk returns the Tree a List or SweepTemp walks and the func that
	// releases it; removes: a SweepTemp that removes what it finds.
	Walk(ctx context.Context, removes bool) (Tree, func(), error)
}

// Wrap wraps *err, unless nil, with fsys.Wrap: deferred by a store's own
// methods (Stat, Delete).
func Wrap(fsys FS, op, p string, err *error) {
	if *err != nil {
		*err = fsys.Wrap(op, p, *err)
	}
}

// Temp is a temporary file beside its target. Done ends every write
// and every Attach.
type Temp interface {
	io.Writer
	// Close makes the bytes written durable (as the store promises) and
	// closes the file; newName: the file is published only under a name
	// that is free (Link), which lets a deferring store skip its fsync.
	Close(newName bool) error
	// Rename renames the closed file over the target durably (a temporary
	// file found gone: ErrTempVanished).
	Rename(ctx context.Context) error
	// Link gives the closed file the target's name only if no entry has
	// it, and makes that durable: an error matching fs.ErrExist when the
	// name is taken, ErrTempVanished when the temporary file is gone,
	// errors.ErrUnsupported when the file system cannot (then nothing
	// was published).
	Link(ctx context.Context) error
	// Exists reports whether an entry has the target's name.
	Exists(ctx context.Context) (bool, error)
	// Detach releases what the write holds (a descriptor, a connection)
	// between Stage and Commit; Attach takes it again.
	Detach()
	Attach(ctx context.Context) error
	// Done removes the temporary file unless it was published, and then
	// the directories the store's writes created that are empty now
	// (Book.Made), and releases what the write holds. Its error is
	// that of the removal (a missing file is none).
	Done(ctx context.Context) error
}

// Writer is what a directory store embeds: the storage.Store methods the
// kit implements on its FS (a store overrides the defaults of what it does
// better: Sync, RewriteIf, RemoveCreatedRoot). The zero value with FS set
// is ready; it is safe for concurrent use.
type Writer struct {
	FS FS
	// GetWhole: Get opens its file as ReadVersioned does (FS.OpenFile's whole).
	GetWhole bool
	// Copy copies exactly size bytes of a Put or Stage (CopyExact if nil).
	Copy func(ctx context.Context, dst io.Writer, src io.Reader, size int64) error
	// CompareFirst: a compare-and-swap compares before it writes
	// anything, rather than while the new content is written (which
	// costs a remote store one transfer time instead of two).
	CompareFirst bool

	writes sync.RWMutex // writes hold it shared, sweeps exclusively
	cas    sync.Mutex   // serialises compare-and-swaps
}

// Sync is storage.Store.Sync of a store whose writes are as durable as its
// server makes them when they return: it does nothing.
func (d *Writer) Sync(context.Context) error { return nil }

// RewriteIf is storage.Store.RewriteIf of a store that does not rewrite.
func (d *Writer) RewriteIf(_ context.Context, p string, _ storage.Version, _ func(io.Reader, io.Writer) error) error {
	return storage.Unsupported(d.FS, "rewrite-if", p)
}

// ListPage is storage.Store.ListPage of a store that lists no pages.
func (d *Writer) ListPage(_ context.Context, prefix string, _ int) ([]storage.Info, bool, error) {
	return nil, false, storage.Unsupported(d.FS, "list-page", prefix)
}

// RemoveCreatedRoot is storage.Store.RemoveCreatedRoot of a store that
// removes no root.
func (d *Writer) RemoveCreatedRoot(context.Context) (bool, error) {
	return false, storage.Unsupported(d.FS, "remove-created-root", "")
}

// Exclusive waits for the writes in flight and holds off new ones (a
// sweep) until the returned func is called.
func (d *Writer) Exclusive() (unlock func()) {
	d.writes.Lock()
	return d.writes.Unlock
}

// HoldCAS holds writes and compare-and-swaps off as a compare-and-swap
// does (a rewrite) until the returned func is called.
func (d *Writer) HoldCAS() (unlock func()) {
	d.writes.RLock()
	d.cas.Lock()
	return func() { d.cas.Unlock(); d.writes.RUnlock() }
}

// Put is storage.Store.Put: the temporary file is renamed over the target,
// or with PutCreate takes the name only if it is free (see publish).
func (d *Writer) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if opts.Mode == storage.PutIfVersion {
		rs, err := storage.Seekable(r)
		if err != nil {
			return "", d.FS.Wrap("put-if", p, err)
		}
		src := &DigestSource{r: rs, size: size}
		if err := d.putIf(ctx, p, src, opts.Version); err != nil {
			return "", d.FS.Wrap("put-if", p, err)
		}
		return src.Version(), nil
	}
	if err := d.put(ctx, p, r, size, opts.Mode == storage.PutCreate); err != nil {
		return "", d.FS.Wrap(opts.Mode.Op(), p, err)
	}
	return "", nil
}

func (d *Writer) put(ctx context.Context, p string, r io.Reader, size int64, exclusive bool) error {
	d.writes.RLock()
	defer d.writes.RUnlock()
	t, err := d.copied(ctx, p, r, size, exclusive)
	if err != nil {
		return err
	}
	defer t.Done(ctx)
	return publish(ctx, t, exclusive)
}

// check checks a write of size bytes to p, and then ctx.Err (the fence):
// creating the temporary file may create its missing parent directories,
// which are changes to the root. The copy into it then only checks
// storage.Cancelled.
func check(ctx context.Context, p string, size int64) error {
	if err := storage.CheckPath(p); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("negative size %d", size)
	}
	return ctx.Err()
}

// written is a new, closed temporary file beside p; the caller calls Done.
func (d *Writer) written(ctx context.Context, p string, deferred, newName bool, fill func(io.Writer) error) (Temp, error) {
	t, err := d.FS.Temp(ctx, p, deferred)
	if err != nil {
		return nil, err
	}
	if err = fill(t); err == nil {
		err = t.Close(newName)
	}
	if err == nil {
		// The fence again: a process paused between check and the create
		// resumes past its lease, after its successor swept the root, and
		// nothing would remove the file but this write (its own name).
		err = ctx.Err()
	}
	if err != nil {
		t.Done(ctx)
		return nil, err
	}
	return t, nil
}

// copied is written for a Put or Stage (d.Copy); the caller holds d.writes.
func (d *Writer) copied(ctx context.Context, p string, r io.Reader, size int64, newName bool) (Temp, error) {
	if err := check(ctx, p, size); err != nil {
		return nil, err
	}
	copy := d.Copy
	if copy == nil {
		copy = CopyExact
	}
	return d.written(ctx, p, true, newName, func(w io.Writer) error { return copy(ctx, w, r, size) })
}

// publish gives the closed temporary file t the target's name, unless ctx
// is done: renamed over it, or when exclusive only if the name is free.
func publish(ctx context.Context, t Temp, exclusive bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !exclusive {
		return t.Rename(ctx)
	}
	err := t.Link(ctx)
	if errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, fs.ErrExist) {
		// No hard links here: look, then rename (safe under the lock).
		var taken bool
		if taken, err = t.Exists(ctx); err == nil && !taken {
			return t.Rename(ctx)
		} else if taken {
			err = fs.ErrExist
		}
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: an entry exists", storage.ErrPrecondition)
	}
	return err
}

// putIf is Put with PutIfVersion: with the zero Version an exclusive
// create, else the new content renamed over the object if the current
// content has ifVersion. The compare and the rename are two steps: calls
// on this Writer are serialised, but between processes this is safe
// only because writers hold the destination lock. A failed condition, a
// failing source and a context done before the commit leave the object as
// it was, and no temporary file.
func (d *Writer) putIf(ctx context.Context, p string, src *DigestSource, ifVersion storage.Version) error {
	if err := check(ctx, p, src.Size()); err != nil {
		return err
	}
	d.writes.RLock()
	defer d.writes.RUnlock()
	if ifVersion == "" {
		return d.create(ctx, p, src)
	}
	d.cas.Lock()
	defer d.cas.Unlock()
	if d.CompareFirst {
		cur, err := d.current(ctx, p)
		if err != nil {
			return err
		}
		if err := CheckVersion(cur, ifVersion); err != nil {
			return err
		}
		t, err := d.writeTemp(ctx, p, src)
		if err != nil {
			return err
		}
		defer t.Done(ctx)
		return publish(ctx, t, false)
	}
	return d.swapWhileWriting(ctx, p, src, ifVersion)
}

// swapWhileWriting reads and hashes the current object while the new one
// is written to a temporary file beside it (both directions of a
// connection at once: a large catalog costs one transfer time, not two),
// then compares and renames.
func (d *Writer) swapWhileWriting(ctx context.Context, p string, src *DigestSource, ifVersion storage.Version) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type current struct {
		v   storage.Version
		err error
	}
	compared := make(chan current, 1)
	go func() {
		v, err := d.current(cctx, p)
		compared <- current{v, err}
	}()
	t, werr := d.writeTemp(ctx, p, src)
	if werr == nil {
		defer t.Done(ctx)
	}
	// The condition's verdict comes first, as if it had been checked
	// before writing: a failed condition is the answer even when the
	// upload failed too (a symbolic link where a parent should be fails
	// both).
	cur := <-compared
	if cur.err == nil {
		if err := CheckVersion(cur.v, ifVersion); err != nil {
			return err
		}
	}
	if werr != nil {
		return werr
	}
	if cur.err != nil {
		return cur.err
	}
	return publish(ctx, t, false)
}

// writeTemp is src in a new, closed temporary file; the caller calls Done.
func (d *Writer) writeTemp(ctx context.Context, p string, src *DigestSource) (Temp, error) {
	return d.written(ctx, p, false, true, func(w io.Writer) error { return src.CopyTo(ctx, w) })
}

// CheckVersion is the compare step of a compare-and-swap: nil if cur ("" for
// absent) is want, else an error matching storage.ErrPrecondition.
func CheckVersion(cur, want storage.Version) error {
	switch {
	case cur == want:
		return nil
	case cur == "":
		return fmt.Errorf("%w: object is absent, want version %s", storage.ErrPrecondition, want)
	default:
		return fmt.Errorf("%w: version is %s, want %s", storage.ErrPrecondition, cur, want)
	}
}

// NewTemp calls create with new temporary names (storage.TempPrefix and
// random text) until one is free: create fails matching fs.ErrExist when the
// name is taken (and then returns no file); 10 names at most.
func NewTemp[F any](create func(name string) (F, error)) (F, string, error) {
	for range 10 {
		name := storage.TempPrefix + rand.Text()
		if f, err := create(name); !errors.Is(err, fs.ErrExist) {
			return f, name, err
		}
	}
	var none F
	return none, "", errors.New("cannot create a unique temporary file")
}

// CreateAttempts bounds how many temporary files an exclusive create
// (PutIfVersion with the zero Version, by a Store that writes a temporary
// file and links it into place) writes when a sweep keeps removing them
// before they are linked.
const CreateAttempts = 5

// ErrTempVanished reports that the temporary file of an exclusive create was
// gone when it was to be linked into place (the lock's holder swept it or
// pruned its directory). It does not match storage.ErrNotExist: the object
// was not missing, the temporary file was.
var ErrTempVanished = errors.New("the temporary file was removed before it was linked into place (swept by the destination lock's holder?)")

// errNoLink is createOnce's error when the file system cannot link.
var errNoLink = errors.New("the file system cannot hard-link")

// create is PutIfVersion with the zero Version: the complete temporary
// file takes the target's name only if no entry (even a dangling symbolic
// link) has it, an atomic exclusive create that never exposes partial
// content, safe between processes and hosts. When the temporary file
// vanishes before it is linked (the destination lock's holder swept it),
// it starts over with a new one, CreateAttempts times at most. A file
// system that cannot link gets FS.CreateNew.
func (d *Writer) create(ctx context.Context, p string, src *DigestSource) error {
	if d.FS.CanLink(ctx) {
		err := d.createOnce(ctx, p, src)
		for attempt := 1; errors.Is(err, ErrTempVanished); attempt++ {
			if attempt == CreateAttempts {
				return fmt.Errorf("%d attempts: %w", attempt, err)
			}
			err = d.createOnce(ctx, p, src)
		}
		if !errors.Is(err, errNoLink) {
			return err
		}
		// createOnce left nothing behind: redo it without the link.
	}
	err := d.FS.CreateNew(ctx, p, src)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: object exists", storage.ErrPrecondition)
	}
	return err
}

func (d *Writer) createOnce(ctx context.Context, p string, src *DigestSource) error {
	t, err := d.writeTemp(ctx, p, src)
	if err != nil {
		return err
	}
	defer t.Done(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	err = t.Link(ctx)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%w: object exists", storage.ErrPrecondition)
	case errors.Is(err, errors.ErrUnsupported):
		return fmt.Errorf("%w: %w", errNoLink, err)
	}
	return err
}

// Open is storage.Store.Open on the FS.
func (d *Writer) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	f, err := d.FS.OpenFile(ctx, p, false)
	if err != nil {
		return nil, d.FS.Wrap("open", p, err)
	}
	return f, nil
}

// Get is storage.Store.Get on the FS: the file read whole and its
// Version, the digest of its bytes. A file that tells its size (an
// *os.File) is read into one allocation.
func (d *Writer) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	f, err := d.FS.OpenFile(ctx, p, d.GetWhole)
	if err != nil {
		return nil, "", d.FS.Wrap("get", p, err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if st, ok := f.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Size() > 0 {
			buf.Grow(int(fi.Size()) + 1) // no regrowth
		}
	}
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, "", d.FS.Wrap("get", p, err)
	}
	return buf.Bytes(), ContentVersion(buf.Bytes()), nil
}

// ReadVersioned is storage.Store.ReadVersioned on the FS: the file is hashed
// on another core while fn decodes (every run reads its catalog, hundreds
// of MB for a large root), and what fn leaves unread is drained.
func (d *Writer) ReadVersioned(ctx context.Context, p string, fn func(io.Reader) error) (storage.Version, error) {
	f, err := d.FS.OpenFile(ctx, p, true)
	if err != nil {
		return "", d.FS.Wrap("read", p, err)
	}
	defer f.Close()
	return ReadDigested(ctx, f, fn, func(err error) error { return d.FS.Wrap("read", p, err) })
}

func (d *Writer) current(ctx context.Context, p string) (storage.Version, error) {
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

// Stage is storage.Store.Stage: the temporary file is written, closed and
// detached until Commit publishes it as Put would, or Abort removes it.
func (d *Writer) Stage(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Staged, error) {
	if opts.Mode == storage.PutIfVersion {
		return nil, storage.Unsupported(d.FS, "stage", p)
	}
	g, err := d.stage(ctx, p, r, size, opts.Mode == storage.PutCreate)
	if err != nil {
		return nil, d.FS.Wrap("stage", p, err)
	}
	return g, nil
}

func (d *Writer) stage(ctx context.Context, p string, r io.Reader, size int64, create bool) (*staged, error) {
	d.writes.RLock()
	defer d.writes.RUnlock()
	t, err := d.copied(ctx, p, r, size, create)
	if err != nil {
		return nil, err
	}
	t.Detach()
	return &staged{d: d, t: t, p: p, create: create}, nil
}

type staged struct {
	d      *Writer
	t      Temp
	p      string
	create bool

	mu   sync.Mutex
	done bool // committed or aborted
}

var errStagedDone = errors.New("staged write already committed or aborted")

// Commit implements Staged: the rename or the exclusive link of Put.
func (g *staged) Commit(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return g.d.FS.Wrap("commit", g.p, errStagedDone)
	}
	g.done = true
	g.d.writes.RLock()
	defer g.d.writes.RUnlock()
	if err := g.t.Attach(ctx); err != nil {
		return g.d.FS.Wrap("commit", g.p, err)
	}
	defer g.t.Done(ctx) // a failed commit leaves nothing either
	if err := publish(ctx, g.t, g.create); err != nil {
		return g.d.FS.Wrap("commit", g.p, err)
	}
	return nil
}

// Abort implements Staged. Aborting a write that a sweep removed does
// nothing either.
func (g *staged) Abort(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done {
		return nil
	}
	g.done = true
	g.d.writes.RLock()
	defer g.d.writes.RUnlock()
	err := g.t.Attach(ctx)
	if err == nil {
		err = g.t.Done(ctx)
	}
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrTempVanished) {
		return nil
	}
	return g.d.FS.Wrap("abort", g.p, err)
}
