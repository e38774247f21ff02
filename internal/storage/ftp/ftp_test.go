package ftp_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// options are the store options of the login l, at its Path.
func options(l ftptest.Login) ftp.Options {
	return ftp.Options{Host: l.Host, Port: l.Port, User: l.User, Password: ftp.Secret(l.Password), CAFile: l.CAFile,
		ServerName: l.ServerName, Root: l.Path}
}

// open opens a store on l with opts changed by mods, closed when the test ends.
func open(t testing.TB, l ftptest.Login, mods ...func(*ftp.Options)) *ftp.Store {
	t.Helper()
	opts := options(l)
	for _, m := range mods {
		m(&opts)
	}
	s, err := ftp.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// eachServer runs fn on each reference server, as a subtest.
func eachServer(t *testing.T, fn func(t *testing.T, l ftptest.Login)) {
	for _, server := range ftptest.Servers {
		t.Run(server, func(t *testing.T) { fn(t, ftptest.Real(t, server)) })
	}
}

// roots maps the stores of a conformance run to their logins.
type roots struct {
	mu sync.Mutex
	m  map[storage.Store]ftptest.Login
}

func (r *roots) login(s storage.Store) ftptest.Login {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[s]
}

// TestConformance runs the storage conformance suite on the three
// reference servers. Pure-FTPd writes a created name's trailing space as
// "_", so there the store refuses such names (see the package doc).
func TestConformance(t *testing.T) {
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		r := &roots{m: map[storage.Store]ftptest.Login{}}
		opts := []storagetest.Option{storagetest.WithPlantTemp(func(t *testing.T, s storage.Store, dir string) string {
			l := r.login(s)
			mkdirOwned(t, l, dir)
			p := storagetest.PlantTempFile(t, l.Dir(), dir)
			chown(t, l, filepath.Join(l.Dir(), filepath.FromSlash(p)))
			return p
		}), storagetest.WithMakeDir(func(t *testing.T, s storage.Store, dir string) {
			mkdirOwned(t, r.login(s), dir)
		})}
		if l.Server == "pureftpd" {
			opts = append(opts, storagetest.WithUnstorableNames(func(name string) bool {
				return strings.HasSuffix(name, " ") || strings.Contains(name, " /")
			}))
		}
		storagetest.Run(t, func(t *testing.T) storage.Store {
			fl := l.FreshRoot(t)
			s := open(t, fl)
			r.mu.Lock()
			r.m[s] = fl
			r.mu.Unlock()
			return s
		}, opts...)
	})
}

// mkdirOwned makes the directory dir below l's root on disk, with its
// parents, owned by the FTP login's user (the owner of l.Root), as the
// operator of the server would.
func mkdirOwned(t testing.TB, l ftptest.Login, dir string) {
	t.Helper()
	p := l.Dir()
	for _, seg := range append([]string{""}, strings.Split(dir, "/")...) {
		p = filepath.Join(p, seg)
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			t.Fatal(err)
		}
		chown(t, l, p)
	}
}

// put writes data to p.
func put(t testing.TB, s storage.Store, p, data string) {
	t.Helper()
	if _, err := s.Put(context.Background(), p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
}

// TestNamesRoundTrip: names with spaces (inside and leading), UTF-8 and
// leading dots are written, listed and read back by the store, and an
// independent client finds the same names and bytes on the server. A
// name with a line break, which FTP can neither send nor list, is refused.
func TestNamesRoundTrip(t *testing.T) {
	names := []string{"with space.txt", " leading space", "dir with space/ünïcödé 日本語.txt", ".dotfile", ".dotdir/.inner", "a/b c/d"}
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		l = l.FreshRoot(t)
		s := open(t, l)
		want := map[string]string{}
		for _, n := range names {
			put(t, s, n, "content of "+n)
			want[n] = "content of " + n
		}
		if got := list(t, s, ""); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
			t.Errorf("List = %q", got)
		}
		if got := l.ListFiles(t); !maps.Equal(got, want) {
			t.Errorf("the server holds %q, want %q", got, want)
		}
		for n, data := range want {
			if got, _, err := s.Get(t.Context(), n); err != nil || string(got) != data {
				t.Errorf("Get(%q) = %q, %v", n, got, err)
			}
		}
		for _, n := range []string{"line\nbreak", "carriage\rreturn"} {
			if _, err := s.Put(t.Context(), n, strings.NewReader("x"), 1, storage.PutOptions{}); !errors.Is(err, storage.ErrInvalidPath) {
				t.Errorf("Put(%q): %v, want ErrInvalidPath", n, err)
			}
		}
	})
}
