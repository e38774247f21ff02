package sftp

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
)

// testServer is the in-process SFTP server with test-local names.
type testServer struct {
	*sftptest.Server
	addr, root, clientKey, knownHosts string
	hostKeys                          []ssh.PublicKey
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	s := sftptest.Start(t)
	return &testServer{Server: s, addr: s.Addr, root: s.Root, clientKey: s.ClientKey, knownHosts: s.KnownHosts, hostKeys: s.HostKeys}
}

func (srv *testServer) loginCount() int  { return srv.Logins() }
func (srv *testServer) dropConnections() { srv.DropConnections() }

// options returns Options for the server's root.
func (srv *testServer) options() Options { return loginOptions(srv.Login()) }

func newKey(t testing.TB, dir, name string) (ssh.Signer, string) {
	return sftptest.NewKey(t, dir, name)
}

func ed25519GenerateKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand.Reader)
}

func pemEncode(b *pem.Block) []byte { return pem.EncodeToMemory(b) }
