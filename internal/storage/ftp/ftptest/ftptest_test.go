package ftptest

import (
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestServers proves what the ftp adapter's tests rely on, on each FTP
// server of scripts/test-servers: the login over explicit TLS with the
// certificate verified, data connections that resume the control
// connection's TLS session (vsftpd and ProFTPD refuse others), a dotfile
// whose name has spaces and UTF-8 stored and listed back, Root as the
// login's "/", a rename onto an existing file (replacing it, or refused
// where the server is set up to), and MKD of an existing directory
// failing.
func TestServers(t *testing.T) {
	for _, tc := range []struct {
		server   string
		replaces bool // a rename onto an existing file replaces it
	}{
		{"vsftpd", true},
		{"pureftpd", true},
		{"pureftpd-norename", false},
		{"proftpd", true},
		{"proftpd-nooverwrite", false},
	} {
		t.Run(tc.server, func(t *testing.T) {
			t.Parallel()
			l := Real(t, tc.server).FreshRoot(t)
			c := l.Connect(t)
			if err := c.MakeDir(l.Path); err != nil {
				t.Fatalf("MKD %s: %v", l.Path, err)
			}
			hidden, other := path.Join(l.Path, ".hidden file é.txt"), path.Join(l.Path, "other.txt")
			if err := c.Stor(hidden, strings.NewReader("first")); err != nil {
				t.Fatalf("STOR %s: %v", hidden, err)
			}
			if err := c.Stor(other, strings.NewReader("second")); err != nil {
				t.Fatalf("STOR %s: %v", other, err)
			}
			both := map[string]string{".hidden file é.txt": "first", "other.txt": "second"}
			if got := l.ListFiles(t); !maps.Equal(got, both) {
				t.Fatalf("ListFiles = %q, want %q", got, both)
			}
			local, err := os.ReadFile(filepath.Join(l.Dir(), ".hidden file é.txt"))
			if err != nil || string(local) != "first" {
				t.Errorf("%s on disk: %q, %v; want \"first\" (Root is the login's /)", l.Dir(), local, err)
			}

			err = c.Rename(other, hidden)
			got := l.ListFiles(t)
			if tc.replaces {
				want := map[string]string{".hidden file é.txt": "second"}
				if err != nil {
					t.Errorf("rename onto an existing file: %v, want it replaced", err)
				} else if !maps.Equal(got, want) {
					t.Errorf("after the rename, ListFiles = %q, want %q", got, want)
				}
			} else {
				if err == nil {
					t.Errorf("rename onto an existing file succeeded, want it refused")
				}
				if !maps.Equal(got, both) {
					t.Errorf("after the refused rename, ListFiles = %q, want %q", got, both)
				}
			}

			if err := c.MakeDir(l.Path); err == nil {
				t.Errorf("MKD of the existing directory %s succeeded, want an error", l.Path)
			}
		})
	}
}
