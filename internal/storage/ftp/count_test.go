package ftp_test

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
)

// TestCommandCounts measures the commands a warm store (logged in, its
// proof done, its root known) sends for the Put of one small file, its Get,
// a List of a tree of five directories on four levels, and a PutCreate,
// and holds them to what the package promises: no command beyond the
// transfer's and the rename's, and one listing per directory (CWD too
// where the server lists with LIST). A transfer is EPSV and its command,
// and PRET before them where the server asks for it (Pure-FTPd).
func TestCommandCounts(t *testing.T) {
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		l = l.FreshRoot(t)
		cc := ftptest.CountCommands(t, net.JoinHostPort(l.Host, strconv.Itoa(l.Port)))
		s := open(t, l, func(o *ftp.Options) { o.Port, o.Connections = cc.Port(), 1 })
		for _, p := range []string{"a/b/c/1", "a/b/c/2", "a/b/3", "a/4", "x/5"} {
			put(t, s, p, "x")
		}
		measure := func(what string, want int, fn func()) {
			cc.Take()
			fn()
			n := int(cc.Take())
			t.Logf("%s: %d commands", what, n)
			if n > want {
				t.Errorf("%s: %d commands, want at most %d", what, n, want)
			}
		}
		transfer := 2 // EPSV, STOR, RETR, MLSD or LIST
		if l.Server == "pureftpd" {
			transfer++ // PRET
		}
		perDir := transfer
		if l.Server == "vsftpd" {
			perDir++ // CWD
		}
		measure("Put of a small file", transfer+2, func() { put(t, s, "small", "data") }) // RNFR, RNTO
		measure("Get", transfer, func() {
			if _, _, err := s.Get(t.Context(), "small"); err != nil {
				t.Fatal(err)
			}
		})
		measure("List of 5 directories", 5*perDir, func() {
			if got := list(t, s, ""); !slices.Contains(got, "a/b/c/2") || len(got) != 6 {
				t.Errorf("List = %q", got)
			}
		})
		looks := 2 // MLST and CWD of the guard
		if l.Server == "vsftpd" {
			looks = 3 // SIZE, CWD and CWD of the guard
		}
		measure("PutCreate of a new file", transfer+2+looks, func() {
			if _, err := s.Put(t.Context(), "new", strings.NewReader("n"), 1, storage.PutOptions{Mode: storage.PutCreate}); err != nil {
				t.Fatal(err)
			}
		})
	})
}
