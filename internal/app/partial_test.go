package app

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
)

// creating is a store on which another writer is creating the catalog in
// place, as an SFTP server's O_EXCL or an FTP guard show it: until this
// process writes its lock, the catalog reads and stats as its first half;
// by the time the lock is held, the other writer has finished. remote says
// whether the store is one where that can happen (Properties.Remote).
type creating struct {
	storage.Store
	remote, forever bool // forever: the catalog stays half written (a broken one)
	locked          atomic.Bool
}

func (c *creating) Properties() storage.Properties {
	p := c.Store.Properties()
	p.Remote = c.remote
	return p
}

func (c *creating) Close() error { return nil }

func (c *creating) partial(path string) bool {
	return path == catalog.FileName && (c.forever || !c.locked.Load())
}

func (c *creating) Put(ctx context.Context, path string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if path == lock.Name {
		c.locked.Store(true)
	}
	return c.Store.Put(ctx, path, r, size, opts)
}

func (c *creating) Get(ctx context.Context, path string) ([]byte, storage.Version, error) {
	b, v, err := c.Store.Get(ctx, path)
	if err == nil && c.partial(path) {
		b = b[:len(b)/2]
	}
	return b, v, err
}

func (c *creating) ReadVersioned(ctx context.Context, path string, fn func(io.Reader) error) (storage.Version, error) {
	if !c.partial(path) {
		return c.Store.ReadVersioned(ctx, path, fn)
	}
	b, v, err := c.Get(ctx, path)
	if err != nil {
		return "", err
	}
	return v, fn(bytes.NewReader(b))
}

func (c *creating) Stat(ctx context.Context, path string) (storage.Info, error) {
	info, err := c.Store.Stat(ctx, path)
	if err == nil && c.partial(path) {
		info.Size /= 2
	}
	return info, err
}

// TestCatalogBeingCreatedIsReadAgain: a catalog that reads invalid before
// the lock on a remote directory store may be one another writer is still
// creating, so the run reads it again under the lock and publishes; one that
// is still invalid there is refused (fail_conflict, exit 1, nothing written);
// on a store where a create is atomic (local disk) the same bytes are refused
// without taking the lock.
func TestCatalogBeingCreatedIsReadAgain(t *testing.T) {
	for _, tc := range []struct {
		name            string
		remote, forever bool
		ok, locks       bool
	}{
		{"remote, created meanwhile", true, false, true, true},
		{"remote, invalid for good", true, true, false, true},
		{"local", false, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "additive")
			f.bundle("theirs", "theirs.one", map[string]string{"theirs.txt": "theirs"})
			if d := f.run(f.app(nil), "theirs"); d.Status != report.StatusOK {
				t.Fatalf("setup: %s", d.Status)
			}
			f.bundle("mine", "mine.one", map[string]string{"mine.txt": "mine"})
			a := f.app(nil)
			var st *creating
			a.Open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
				base, err := a.DefaultOpenStore(ctx, d, root)
				st = &creating{Store: base, remote: tc.remote, forever: tc.forever}
				return st, err
			}
			d := f.run(a, "mine")
			_, err := os.Stat(filepath.Join(f.root, "mine.txt"))
			switch {
			case tc.ok && (d.Status != report.StatusOK || d.Action != "upsert_additive" || err != nil):
				t.Errorf("%s %s, mine.txt: %v; want upsert_additive ok", d.Action, d.Status, err)
			case !tc.ok && (d.Status != report.StatusFailed || d.Action != "fail_conflict" || err == nil):
				t.Errorf("%s %s, mine.txt written: %v; want fail_conflict, nothing written", d.Action, d.Status, err == nil)
			case st.locked.Load() != tc.locks:
				t.Errorf("locked: %v, want %v", st.locked.Load(), tc.locks)
			}
			checkInvariants(t, f.root, nil, &catalog.Catalog{}, nil)
		})
	}
}
