package sftp

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/probe"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/probetest"
)

// Servers that announce more than they do, as rclone serve sftp was seen
// to: hardlink@openssh.com answered with SSH_FX_OP_UNSUPPORTED, and O_EXCL
// ignored. The in-process server of sftptest.WithQuirks reproduces them
// through pkg/sftp's request server, which announces hardlink@openssh.com
// (its default extensions; no test here changes that global).

// newQuirkyServer starts the request-server variant of the in-process
// server with the quirks q.
func newQuirkyServer(t *testing.T, q sftptest.Quirks) *testServer {
	t.Helper()
	s := sftptest.Start(t, sftptest.WithQuirks(q))
	return &testServer{Server: s, addr: s.Addr, root: s.Root, clientKey: s.ClientKey, knownHosts: s.KnownHosts, hostKeys: s.HostKeys}
}

// conformance runs the storage conformance suite against srv, a fresh
// root below its Root for each store.
func conformance(t *testing.T, srv *testServer, opts ...storagetest.Option) {
	n := 0
	storagetest.Run(t, func(t *testing.T) storage.Store {
		n++
		o := srv.options()
		o.Root = filepath.Join(srv.root, strconv.Itoa(n))
		return open(t, o)
	}, append([]storagetest.Option{storagetest.WithPlantTemp(plantTemp), makeDir}, opts...)...)
}

// TestConformanceRequestServer checks the request-server handlers
// themselves: without quirks they pass the suite, temporary-file races
// included, as pkg/sftp's Server does.
func TestConformanceRequestServer(t *testing.T) {
	conformance(t, newQuirkyServer(t, sftptest.Quirks{}), tempCreate)
}

// TestConformanceHardlinkUnsupported: a server that announces
// hardlink@openssh.com but answers it with SSH_FX_OP_UNSUPPORTED passes
// the suite: PutIf and PutNew fall back to what a server without the
// extension gets.
func TestConformanceHardlinkUnsupported(t *testing.T) {
	conformance(t, newQuirkyServer(t, sftptest.Quirks{HardlinkUnsupported: true}))
}

// TestHardlinkUnsupportedFallsBack: the first exclusive create on a
// connection tries the announced hardlink@openssh.com, gets
// SSH_FX_OP_UNSUPPORTED, marks the connection and redoes the create with
// O_EXCL; exclusive creates stay exclusive, nothing temporary is left, the
// probe passes, and a new connection falls back again.
func TestHardlinkUnsupportedFallsBack(t *testing.T) {
	srv := newQuirkyServer(t, sftptest.Quirks{HardlinkUnsupported: true})
	s := open(t, srv.options())
	ctx := t.Context()
	c, err := s.client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !c.hardlink || !c.canLink() {
		t.Fatal("the server does not announce hardlink@openssh.com: the quirk is not reproduced")
	}
	if _, err := storage.PutIf(ctx, s, "x/lock", []byte("one"), ""); err != nil {
		t.Fatalf("first create: %v", err)
	}
	if c.canLink() {
		t.Error("the connection still uses hardlink@openssh.com after SSH_FX_OP_UNSUPPORTED")
	}
	if _, err := storage.PutIf(ctx, s, "x/lock", []byte("two"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("second create: %v, want a precondition failure", err)
	}
	if data, _, err := s.Get(ctx, "x/lock"); err != nil || string(data) != "one" {
		t.Errorf("Get = %q, %v; want \"one\"", data, err)
	}
	if err := probetest.Exclusion(ctx, s); err != nil {
		t.Errorf("probe: %v", err)
	}

	// PutNew on a new connection: its first link fails the same way.
	c.close()
	if _, err := s.Put(ctx, "y/new", strings.NewReader("new"), 3, storage.PutOptions{Mode: storage.PutCreate}); err != nil {
		t.Fatalf("PutNew: %v", err)
	}
	if c2, err := s.client(ctx); err != nil || c2 == c || c2.canLink() {
		t.Errorf("PutNew on a new connection did not fall back (same connection: %v, err: %v)", c2 == c, err)
	}
	if _, err := s.Put(ctx, "y/new", strings.NewReader("two"), 3, storage.PutOptions{Mode: storage.PutCreate}); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("second PutNew: %v, want a precondition failure", err)
	}
	if data, _, err := s.Get(ctx, "y/new"); err != nil || string(data) != "new" {
		t.Errorf("Get = %q, %v; want \"new\"", data, err)
	}

	want := []string{"x", "x/lock", "y", "y/new"}
	if got := entries(t, srv.root); !slices.Equal(got, want) {
		t.Errorf("root holds %q, want %q", got, want)
	}
}

// TestIgnoredExclusiveRefusedByProbe: a server that also ignores O_EXCL
// is refused by the exclusion probe, which leaves nothing behind.
func TestIgnoredExclusiveRefusedByProbe(t *testing.T) {
	srv := newQuirkyServer(t, sftptest.Quirks{HardlinkUnsupported: true, IgnoreExclusive: true})
	s := open(t, srv.options())
	err := probetest.Exclusion(t.Context(), s)
	var ue *probe.UnenforcedError
	if !errors.As(err, &ue) || ue.Capability != probe.ExclusiveCreate {
		t.Fatalf("probe: %v, want an *probe.UnenforcedError for %q", err, probe.ExclusiveCreate)
	}
	if !strings.Contains(err.Error(), "single_writer") {
		t.Errorf("the error does not name single_writer: %v", err)
	}
	if got := entries(t, srv.root); len(got) != 0 {
		t.Errorf("the probe left %q at the root", got)
	}
}

// TestIgnoredExclusiveWithHardlink: O_EXCL ignored does not matter while
// hardlink@openssh.com works (exclusive creates link, temporary files have
// random names): the probe passes.
func TestIgnoredExclusiveWithHardlink(t *testing.T) {
	srv := newQuirkyServer(t, sftptest.Quirks{IgnoreExclusive: true})
	s := open(t, srv.options())
	if err := probetest.Exclusion(t.Context(), s); err != nil {
		t.Errorf("probe: %v", err)
	}
}

// entries returns every entry below dir (directories too), relative, with
// slashes, in lexical order; none if dir does not exist.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == dir {
			return filepath.SkipDir
		}
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		got = append(got, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestHardlinkUnsupportedConcurrent: creates in flight together on one
// connection all meet SSH_FX_OP_UNSUPPORTED, mark the connection and fall
// back (run with -race: the mark is read and set concurrently).
func TestHardlinkUnsupportedConcurrent(t *testing.T) {
	srv := newQuirkyServer(t, sftptest.Quirks{HardlinkUnsupported: true})
	s := open(t, srv.options())
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			name := "c/" + strconv.Itoa(i)
			if _, errs[i] = storage.PutIf(ctx, s, name, []byte(name), ""); errs[i] == nil {
				_, errs[i] = s.Put(ctx, name+".new", strings.NewReader(name), int64(len(name)), storage.PutOptions{Mode: storage.PutCreate})
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := list(t, s, "c/"); len(got) != 2*len(errs) {
		t.Errorf("List = %q, want %d objects", got, 2*len(errs))
	}
}
