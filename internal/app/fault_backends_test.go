package app

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
	"github.com/distributor-dev/distributor/internal/storage/gcs/gcstest"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultstore"
	"github.com/distributor-dev/distributor/internal/txn"
)

// keepOpen stops the app from closing a store the test keeps using.
type keepOpen struct{ storage.Store }

func (keepOpen) Close() error { return nil }

// faultBackends are the stores the fault-injection test runs on: local
// disk, the in-process S3 and SFTP servers, fake-gcs-server, Azurite and
// ProFTPD's FTPS.
var faultBackends = []struct {
	name string
	open func(t *testing.T) storage.Store
}{
	{"local", func(t *testing.T) storage.Store {
		st, err := local.NewDeferred(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"s3-inprocess", func(t *testing.T) storage.Store {
		return s3test.Start(t, s3test.TLS()).Open(t, "site")
	}},
	{"sftp-inprocess", func(t *testing.T) storage.Store {
		st, err := sftp.New(context.Background(), sftpOptions(sftptest.Start(t).Login()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"gcs-fake", func(t *testing.T) storage.Store {
		return gcstest.FakeGCS(t).Open(t, gcstest.Prefix(t))
	}},
	{"azure-azurite", func(t *testing.T) storage.Store {
		return azuretest.Azurite(t).Open(t)
	}},
	{"ftp-proftpd", func(t *testing.T) storage.Store {
		l := ftptest.Real(t, "proftpd").FreshRoot(t)
		st, err := ftp.New(context.Background(), ftp.Options{Host: l.Host, Port: l.Port, User: l.User,
			Password: ftp.Secret(l.Password), CAFile: l.CAFile, Root: l.Path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
}

// sftpOptions returns the sftp adapter's Options for a test server's login.
func sftpOptions(l sftptest.Login) sftp.Options {
	return sftp.Options{Host: l.Host, Port: l.Port, User: l.User, IdentityFile: l.ClientKey, KnownHostsFile: l.KnownHosts, Root: l.Root}
}

func storeRestore(t *testing.T, st storage.Store, files map[string]string) {
	t.Helper()
	ctx := context.Background()
	for p := range storagetest.Snapshot(t, st) {
		if err := st.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range files {
		if _, err := st.Put(ctx, p, strings.NewReader(c), int64(len(c)), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// storeInvariants asserts what spec section 6 promises after any run: the
// catalog is truthful, every object is recorded or was there before
// unrecorded (no orphan), no record of an untouched path was lost, and
// unmanaged content is byte-identical.
func storeInvariants(t *testing.T, st storage.Store, before map[string]string, beforeCat *catalog.Catalog, unmanaged []string) *catalog.Catalog {
	t.Helper()
	ctx := context.Background()
	r, err := ReadRoot(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if r.State.Status != catalog.StatusCatalog {
		t.Fatalf("state %s (%v)", r.State.Status, r.State.Problem)
	}
	c := r.State.Catalog
	audit, err := Audit(ctx, st, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !audit.Truthful() {
		t.Errorf("catalog not truthful: missing %v corrupt %v", audit.Missing, audit.Corrupt)
	}
	idx := c.Index()
	after := storagetest.Snapshot(t, st)
	for p := range after {
		if strings.HasPrefix(p, ".distributor") {
			if p != catalog.FileName {
				t.Errorf("left reserved object %s", p)
			}
			continue
		}
		if idx[p] == nil && !slices.Contains(unmanaged, p) {
			t.Errorf("orphan: %s is in storage but not recorded", p)
		}
	}
	for _, u := range unmanaged {
		if after[u] != before[u] {
			t.Errorf("unmanaged %s changed", u)
		}
	}
	for _, old := range beforeCat.Outputs {
		if _, exists := after[old.Path]; exists && idx[old.Path] == nil {
			t.Errorf("record of %s lost while the object still exists", old.Path)
		}
	}
	return c
}

// TestFaultInjectionAllBackends fails, and separately "crashes" at (every
// later write fails too), every write of a replacement run on local disk,
// S3 and SFTP; after each, recovery (what the next writer does first) must
// leave a truthful catalog, no orphan, no lost record and unmanaged content
// untouched, and a clean rerun converges.
func TestFaultInjectionAllBackends(t *testing.T) {
	total := map[string]int{}
	for _, b := range faultBackends {
		t.Run(b.name, func(t *testing.T) {
			base := b.open(t)
			f := newFixture(t, "replacement")
			app := func(wrap func(storage.Store) storage.Store) *App {
				a := f.app(nil)
				a.Open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
					var st storage.Store = keepOpen{base}
					if wrap != nil {
						st = wrap(st)
					}
					return st, nil
				}
				return a
			}
			f.bundle("mine", "mine.one", map[string]string{"keep.txt": "keep", "change.txt": "v1", "drop.txt": "drop", "docs/a.md": "# A"})
			f.bundle("theirs", "theirs.one", map[string]string{"theirs.txt": "theirs"})
			for _, p := range []string{"mine", "theirs"} {
				if d := f.run(app(nil), p); d.Status != report.StatusOK {
					t.Fatalf("setup run %s: %s %v", p, d.Status, d.Error)
				}
			}
			ctx := context.Background()
			if _, err := base.Put(ctx, "hand.txt", strings.NewReader("hand"), 4, storage.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			f.bundle("mine", "mine.two", map[string]string{"keep.txt": "keep", "change.txt": "v2", "new/one.txt": "1", "new/two.txt": "2", "docs/a.md": "# A2"})
			pristine := storagetest.Snapshot(t, base)
			r0, err := ReadRoot(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			counter := &faultstore.Store{Ignore: faultstore.IgnoreLock}
			if d := f.run(app(func(s storage.Store) storage.Store { counter.Store = s; return counter }), "mine"); d.Status != report.StatusOK {
				t.Fatalf("clean run: %s %v", d.Status, d.Error)
			}
			n := counter.Calls()
			total[b.name] = n
			for k := 1; k <= n; k++ {
				for _, crash := range []bool{false, true} {
					storeRestore(t, base, pristine)
					fs := &faultstore.Store{FailAt: k, Sticky: crash, Ignore: faultstore.IgnoreLock}
					d := f.run(app(func(s storage.Store) storage.Store { fs.Store = s; return fs }), "mine")
					op := fs.Log()[k-1]
					if d.Status == report.StatusOK && op != "delete "+journal.Name {
						t.Fatalf("k=%d crash=%v: run with %q failing succeeded", k, crash, op)
					}
					// A crash leaves the lock behind, with the run's intent
					// in it: the next writer takes it over (moving the
					// intent to the journal), finds the journal and
					// recovers.
					takeOverDeadRun(t, base)
					if _, err := txn.Recover(ctx, base, nil, time.Now()); err != nil {
						t.Fatalf("k=%d crash=%v: recover: %v", k, crash, err)
					}
					storeInvariants(t, base, pristine, r0.State.Catalog, []string{"hand.txt"})
					if d := f.run(app(nil), "mine"); d.Status != report.StatusOK {
						t.Fatalf("k=%d crash=%v: rerun: %s %s", k, crash, d.Status, str(d.Error))
					}
					c := storeInvariants(t, base, pristine, r0.State.Catalog, []string{"hand.txt"})
					if got := strings.Join(paths(c), ","); got != "change.txt,docs/a.html,keep.txt,new/one.txt,new/two.txt,theirs.txt" {
						t.Fatalf("k=%d crash=%v: converged to %s", k, crash, got)
					}
				}
			}
		})
	}
	t.Logf("crash points per backend (each failed once and crashed once): %v", total)
}

// takeOverDeadRun does what the next writer does with the lock a dead run
// left: it moves the record's intent to the journal (lock.MoveIntent) and
// removes the record.
func takeOverDeadRun(t *testing.T, st storage.Store) {
	t.Helper()
	ctx := context.Background()
	info, _, err := lock.Read(ctx, st)
	if errors.Is(err, storage.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := lock.MoveIntent(ctx, st, info); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, lock.Name); err != nil {
		t.Fatal(err)
	}
}

func str(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
