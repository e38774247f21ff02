package ftp_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
	"github.com/distributor-dev/distributor/internal/storage/probe"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// isDir reports whether the local path p is a directory.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// TestExclusiveCreate: an exclusive create makes the file and its guard;
// a second create, by this store or another, fails with ErrPrecondition;
// List and SweepTemp never show the guard; Delete removes both.
func TestExclusiveCreate(t *testing.T) {
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		l = l.FreshRoot(t)
		s, other := open(t, l), open(t, l)
		ctx := t.Context()
		v, err := storage.PutIf(ctx, s, "d/lock", []byte("one"), "")
		if err != nil {
			t.Fatal(err)
		}
		guard := filepath.Join(l.Dir(), "d", ftp.GuardPrefix+"lock")
		if !isDir(guard) {
			t.Fatalf("no guard directory %s", guard)
		}
		for _, st := range []storage.Store{s, other} {
			if _, err := storage.PutIf(ctx, st, "d/lock", []byte("two"), ""); !errors.Is(err, storage.ErrPrecondition) {
				t.Errorf("second exclusive create: %v, want ErrPrecondition", err)
			}
		}
		if data, got, err := other.Get(ctx, "d/lock"); err != nil || string(data) != "one" || got != v {
			t.Errorf("Get = %q, %s, %v; want one, %s", data, got, err, v)
		}
		if got := list(t, s, ""); !slices.Equal(got, []string{"d/lock"}) {
			t.Errorf("List = %q, want d/lock", got)
		}
		if found, err := s.SweepTemp(ctx, storage.SweepOptions{}); err != nil || len(found) != 0 || !isDir(guard) {
			t.Errorf("SweepTemp = %q, %v; guard still there: %v", found, err, isDir(guard))
		}
		if err := s.Delete(ctx, "d/lock"); err != nil {
			t.Fatal(err)
		}
		if left := storagetest.DirEntries(t, l.Dir()); len(left) != 0 {
			t.Errorf("Delete left %q", left)
		}
		// The name is free again.
		if _, err := storage.PutIf(ctx, other, "d/lock", []byte("three"), ""); err != nil {
			t.Errorf("exclusive create after Delete: %v", err)
		}
	})
}

// TestGuardWithoutFile: a guard whose file is missing (a creator between
// MKD and rename, or killed there) makes the name an empty object for
// every read, blocks creates, is never listed as a guard nor swept, and
// goes with Delete.
func TestGuardWithoutFile(t *testing.T) {
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		l = l.FreshRoot(t)
		s := open(t, l)
		ctx := t.Context()
		put(t, s, "e/other", "x")
		mkdirOwned(t, l, "e/"+ftp.GuardPrefix+"lock")
		empty := dirstore.ContentVersion(nil)
		if data, v, err := s.Get(ctx, "e/lock"); err != nil || data == nil || len(data) != 0 || v != empty {
			t.Errorf("Get = %q (nil %v), %s, %v; want empty, %s", data, data == nil, v, err, empty)
		}
		if v, err := s.ReadVersioned(ctx, "e/lock", func(r io.Reader) error {
			b, err := io.ReadAll(r)
			if len(b) != 0 {
				t.Errorf("ReadVersioned read %q", b)
			}
			return err
		}); err != nil || v != empty {
			t.Errorf("ReadVersioned = %s, %v", v, err)
		}
		if info, err := s.Stat(ctx, "e/lock"); err != nil || info.Size != 0 || info.Path != "e/lock" {
			t.Errorf("Stat = %+v, %v", info, err)
		}
		if got := list(t, s, "e/"); !slices.Equal(got, []string{"e/lock", "e/other"}) {
			t.Errorf("List = %q, want e/lock (empty) and e/other", got)
		}
		if _, err := storage.PutIf(ctx, s, "e/lock", []byte("mine"), ""); !errors.Is(err, storage.ErrPrecondition) {
			t.Errorf("exclusive create over a guard: %v, want ErrPrecondition", err)
		}
		if _, err := s.Put(ctx, "e/lock", strings.NewReader("new"), 3, storage.PutOptions{Mode: storage.PutCreate}); !errors.Is(err, storage.ErrPrecondition) {
			t.Errorf("PutCreate over a guard: %v, want ErrPrecondition", err)
		}
		// A compare-and-swap from the empty object's Version completes it.
		if _, err := storage.PutIf(ctx, s, "e/lock", []byte("taken over"), empty); err != nil {
			t.Errorf("PutIf from the empty Version: %v", err)
		}
		if _, err := s.SweepTemp(ctx, storage.SweepOptions{}); err != nil {
			t.Fatal(err)
		}
		if !isDir(filepath.Join(l.Dir(), "e", ftp.GuardPrefix+"lock")) {
			t.Error("SweepTemp removed the guard")
		}
		if err := s.Delete(ctx, "e/lock"); err != nil {
			t.Fatal(err)
		}
		if got := storagetest.DirEntries(t, l.Dir()); !slices.Equal(got, []string{"e", "e/other"}) {
			t.Errorf("after Delete: %q, want e and e/other", got)
		}
	})
}

// TestGuardNamesRefused: store paths may not name a guard.
func TestGuardNamesRefused(t *testing.T) {
	s := open(t, ftptest.Real(t, ftptest.Servers[0]).FreshRoot(t))
	for _, p := range []string{ftp.GuardPrefix + "x", "a/" + ftp.GuardPrefix + "x/y"} {
		if _, err := s.Put(t.Context(), p, bytes.NewReader(nil), 0, storage.PutOptions{}); !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("Put(%q): %v, want ErrInvalidPath", p, err)
		}
	}
}

// TestProofsRefuseServers: a server whose renames cannot replace a file
// (Pure-FTPd -G, ProFTPD without AllowOverwrite) is refused, with an error
// naming the setting, before anything is written: every write fails the
// same way and the server's disk is unchanged; reads still work.
func TestProofsRefuseServers(t *testing.T) {
	for _, tc := range []struct{ server, setting string }{
		{"pureftpd-norename", "--norename"},
		{"proftpd-nooverwrite", "AllowOverwrite on"},
	} {
		t.Run(tc.server, func(t *testing.T) {
			l := ftptest.Real(t, tc.server)
			before := storagetest.DirEntries(t, l.Root)
			s := open(t, l.FreshRoot(t))
			ctx := t.Context()
			writes := map[string]func() error{
				"Put":    func() error { _, err := s.Put(ctx, "a/b", strings.NewReader("b"), 1, storage.PutOptions{}); return err },
				"PutIf":  func() error { _, err := storage.PutIf(ctx, s, "lock", []byte("l"), ""); return err },
				"Delete": func() error { return s.Delete(ctx, "a/b") },
				"Sweep":  func() error { _, err := s.SweepTemp(ctx, storage.SweepOptions{}); return err },
			}
			for name, write := range writes {
				err := write()
				var pe *ftp.ProofError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.setting) || s.IsTransient(err) {
					t.Errorf("%s: %v; want a *ftp.ProofError naming %q", name, err, tc.setting)
				}
			}
			if _, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true}); err != nil {
				t.Errorf("dry-run sweep: %v", err)
			}
			if _, _, err := s.Get(ctx, "a/b"); !errors.Is(err, storage.ErrNotExist) {
				t.Errorf("Get: %v, want ErrNotExist", err)
			}
			if after := storagetest.DirEntries(t, l.Root); !slices.Equal(after, before) {
				t.Errorf("the server's root changed: %q, was %q", after, before)
			}
		})
	}
}

// TestCreateOverUnguardedFile: an exclusive create whose guard MKD
// succeeds over a name a file already has (a plain Put's, or one whose
// guard is gone, as on a server whose MKD does not refuse an existing
// directory) fails and leaves the file: with ErrPrecondition where the
// proofs found MKD enforced, else with the *probe.UnenforcedError that the
// lock's exclusion proof passes on (so that single_writer decides), keeping
// the guard, which may be another writer's.
func TestCreateOverUnguardedFile(t *testing.T) {
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		for _, unenforced := range []bool{false, true} {
			l := l.FreshRoot(t)
			s := open(t, l)
			ctx := t.Context()
			if _, err := storage.PutIf(ctx, s, "lock", []byte("one"), ""); err != nil {
				t.Fatal(err)
			}
			if unenforced {
				ftp.AssumeMKDUnenforced(s)
			}
			guard := filepath.Join(l.Dir(), ftp.GuardPrefix+"lock")
			if err := os.Remove(guard); err != nil {
				t.Fatal(err)
			}
			_, err := storage.PutIf(ctx, s, "lock", []byte("two"), "")
			var ue *probe.UnenforcedError
			switch {
			case !unenforced && !errors.Is(err, storage.ErrPrecondition):
				t.Errorf("create over a file without guard: %v, want ErrPrecondition", err)
			case unenforced && (!errors.As(err, &ue) || errors.Is(err, storage.ErrPrecondition)):
				t.Errorf("create on a server whose MKD is unenforced: %v, want the *probe.UnenforcedError", err)
			}
			if data, _, err := s.Get(ctx, "lock"); err != nil || string(data) != "one" {
				t.Errorf("Get = %q, %v; want one", data, err)
			}
			if isDir(guard) != unenforced {
				t.Errorf("guard left: %v, want %v", isDir(guard), unenforced)
			}
		}
	})
}
