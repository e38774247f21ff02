//go:build unix

package ftp_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
)

// chown gives p to the owner of l.Root (the FTP login: the test runs as
// root on the servers' machine).
func chown(t testing.TB, l ftptest.Login, p string) {
	t.Helper()
	fi, err := os.Stat(l.Root)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if err := os.Chown(p, int(st.Uid), int(st.Gid)); err != nil {
		t.Fatal(err)
	}
}
