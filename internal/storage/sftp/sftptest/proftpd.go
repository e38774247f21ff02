package sftptest

import (
	"net"
	"strconv"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// ProFTPD returns the login of ProFTPD's mod_sftp that scripts/test-servers
// starts (DISTRIBUTOR_TEST_PROFTPD_*), with Root the server's root, which
// tests share: see FreshRoot. It skips the test (fails it under CI=true)
// when that server is not configured.
//
// mod_sftp (1.3.8) offers posix-rename, hardlink, fsync and statvfs under
// OpenSSH's names, and honours O_EXCL: everything distributor uses.
func ProFTPD(t testing.TB) Login {
	t.Helper()
	env := storagetest.ServerEnv(t, "ProFTPD SFTP",
		"DISTRIBUTOR_TEST_PROFTPD_ADDR", "DISTRIBUTOR_TEST_PROFTPD_USER", "DISTRIBUTOR_TEST_PROFTPD_KEY",
		"DISTRIBUTOR_TEST_PROFTPD_KNOWN_HOSTS", "DISTRIBUTOR_TEST_PROFTPD_ROOT")
	host, port, err := net.SplitHostPort(env[0])
	if err != nil {
		t.Fatalf("DISTRIBUTOR_TEST_PROFTPD_ADDR: %v", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("DISTRIBUTOR_TEST_PROFTPD_ADDR: %v", err)
	}
	return Login{Host: host, Port: p, User: env[1], ClientKey: env[2], KnownHosts: env[3], Root: env[4]}
}
