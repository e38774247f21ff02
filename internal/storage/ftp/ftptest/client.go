package ftptest

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"strconv"
	"testing"
	"time"

	"github.com/jlaffaye/ftp"
)

// dialTimeout bounds connecting to a test server (loopback).
const dialTimeout = 30 * time.Second

// TLSConfig returns the client TLS configuration for l's server: the
// certificate verified against CAFile for the name ServerName or Host, and a session
// cache, so that the data connections resume the control connection's TLS
// session, which vsftpd and ProFTPD require.
func (l Login) TLSConfig(t testing.TB) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(l.CAFile)
	if err != nil {
		t.Fatalf("FTP test server %s: %v", l.Server, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("FTP test server %s: %s holds no PEM certificate", l.Server, l.CAFile)
	}
	return &tls.Config{
		RootCAs:    roots,
		ServerName: cmp.Or(l.ServerName, l.Host),
		MinVersion: tls.VersionTLS12,
		// vsftpd 3.0.3 fails uploads past about 64 KiB on TLS 1.3 data
		// connections (426), as the adapter found: it caps at 1.2 too.
		MaxVersion:         tls.VersionTLS12,
		ClientSessionCache: tls.NewLRUClientSessionCache(0),
	}
}

// Connect logs in to l's server over explicit TLS (AUTH TLS, then PROT P
// on the data connections, passive mode) with an independent client, and
// closes the connection when the test ends. MLSD is used for listings
// where the server offers it, else LIST.
func (l Login) Connect(t testing.TB) *ftp.ServerConn {
	t.Helper()
	addr := net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
	c, err := ftp.Dial(addr, ftp.DialWithExplicitTLS(l.TLSConfig(t)), ftp.DialWithTimeout(dialTimeout),
		ftp.DialWithContext(t.Context()))
	if err != nil {
		t.Fatalf("FTP test server %s: connecting to %s: %v", l.Server, addr, err)
	}
	if err := c.Login(l.User, l.Password); err != nil {
		c.Quit()
		t.Fatalf("FTP test server %s: logging in to %s as %s: %v", l.Server, addr, l.User, err)
	}
	t.Cleanup(func() { c.Quit() })
	return c
}

// ListFiles returns every regular file below Path on the server,
// recursively, as its name relative to Path (slash-separated) and its
// content, as an independent client sees them over FTPS.
func (l Login) ListFiles(t testing.TB) map[string]string {
	t.Helper()
	c := l.Connect(t)
	files := map[string]string{}
	if err := listFiles(c, l.Path, "", files); err != nil {
		t.Fatalf("FTP test server %s: listing %s: %v", l.Server, l.Path, err)
	}
	return files
}

// listFiles adds the regular files below dir (a server path) to files,
// named by rel joined with their path below dir.
func listFiles(c *ftp.ServerConn, dir, rel string, files map[string]string) error {
	entries, err := c.List(dir)
	if err != nil {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, e := range entries {
		// MLSD's cdir and pdir entries, and LIST's "." and "..".
		if e.Name == "." || e.Name == ".." || e.Name == "" || path.Base(e.Name) != e.Name {
			continue
		}
		p, r := path.Join(dir, e.Name), path.Join(rel, e.Name)
		switch e.Type {
		case ftp.EntryTypeFolder:
			if err := listFiles(c, p, r, files); err != nil {
				return err
			}
		case ftp.EntryTypeFile:
			data, err := retrieve(c, p)
			if err != nil {
				return err
			}
			files[r] = string(data)
		}
	}
	return nil
}

func retrieve(c *ftp.ServerConn, p string) ([]byte, error) {
	resp, err := c.Retr(p)
	if err != nil {
		return nil, fmt.Errorf("retrieving %s: %w", p, err)
	}
	data, err := io.ReadAll(resp)
	if cerr := resp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("retrieving %s: %w", p, err)
	}
	return data, nil
}
