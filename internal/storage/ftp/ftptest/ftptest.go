// Package ftptest describes the FTP servers of scripts/test-servers for the
// ftp adapter's tests (Real), and is an independent FTPS client
// (github.com/jlaffaye/ftp, not the adapter) with which tests check a
// server from outside distributor: Connect, ListFiles.
//
// The servers (scripts/servers/ftp.sh) run on 127.0.0.1 with explicit TLS
// required on the control and the data connections, passive mode, and one
// chrooted login each, whose "/" is a local directory (Login.Root):
//
//   - vsftpd: LIST only, dotfiles listed (force_dot_files), TLS session
//     reuse required on data connections
//   - pureftpd: Pure-FTPd, MLSD, dotfiles listed (-D)
//   - pureftpd-norename: the same with renames forbidden (-G)
//   - proftpd: ProFTPD mod_tls, MLSD, AllowOverwrite on, TLS session reuse
//     required
//   - proftpd-nooverwrite: the same with AllowOverwrite off
package ftptest

import (
	"crypto/rand"
	"net"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// Servers are the three reference servers every FTP test runs on.
var Servers = []string{"vsftpd", "pureftpd", "proftpd"}

// Login is one FTP test server's account.
type Login struct {
	Server         string // "vsftpd", "pureftpd", "pureftpd-norename", "proftpd", "proftpd-nooverwrite"
	Host           string // 127.0.0.1
	Port           int
	User, Password string
	CAFile         string // PEM of the CA that signed the server certificate (SAN IP:127.0.0.1, DNS:localhost)
	Root           string // the local directory that the login sees as "/"
	Path           string // the server path of the test's root ("/" until FreshRoot)
	// ServerName is the name the certificate is checked for, "" for Host
	// (a Proxy's login: "localhost").
	ServerName string
	// Pasv is the first of the server's 1,000 passive data ports (0: not
	// known, and no Proxy).
	Pasv int
}

// Real returns the login of the FTP server of scripts/test-servers named
// server (see the package doc), from DISTRIBUTOR_TEST_FTP_<SERVER>_ADDR,
// _USER, _PASSWORD, _CA and _ROOT (SERVER in upper case, '-' as '_'), with
// Path "/", the root that tests share: see FreshRoot. It skips the test
// (fails it under CI=true) when that server is not configured.
func Real(t testing.TB, server string) Login {
	t.Helper()
	prefix := "DISTRIBUTOR_TEST_FTP_" + strings.ToUpper(strings.ReplaceAll(server, "-", "_")) + "_"
	env := storagetest.ServerEnv(t, "FTP "+server,
		prefix+"ADDR", prefix+"USER", prefix+"PASSWORD", prefix+"CA", prefix+"ROOT")
	host, port, err := net.SplitHostPort(env[0])
	if err != nil {
		t.Fatalf("%sADDR: %v", prefix, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("%sADDR: %v", prefix, err)
	}
	pasv, _ := strconv.Atoi(os.Getenv(prefix + "PASV"))
	return Login{Server: server, Host: host, Port: p, User: env[1], Password: env[2], CAFile: env[3], Root: env[4], Path: "/", Pasv: pasv}
}

// FreshRoot returns l with Path a new directory below l.Path,
// "/<test name>-<random>" for the shared root, which is removed from disk
// (Root+Path) when the test ends: the test servers run on this machine.
// The directory itself is not created.
func (l Login) FreshRoot(t testing.TB) Login {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + rand.Text()[:8]
	l.Path = path.Join(l.Path, name)
	dir := l.Dir()
	t.Cleanup(func() { os.RemoveAll(dir) })
	return l
}

// Dir returns the local directory of Path: filepath.Join(l.Root, l.Path).
func (l Login) Dir() string {
	return filepath.Join(l.Root, filepath.FromSlash(l.Path))
}
