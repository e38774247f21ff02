//go:build !unix

package ftp_test

import (
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
)

// chown: the FTP test servers run on Unix only (scripts/test-servers).
func chown(t testing.TB, l ftptest.Login, p string) { t.Skip("FTP test servers run on Unix only") }
