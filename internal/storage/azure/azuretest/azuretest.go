// Package azuretest describes the Azurite server of scripts/test-servers
// (scripts/servers/azurite.sh) and opens stores on it, for the tests of
// the azure adapter and of the code above it.
package azuretest

import (
	"context"
	"crypto/rand"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// Server is an Azurite Blob endpoint with a container for the tests.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT/devstoreaccount1
	Addr      string // 127.0.0.1:PORT
	Account   string
	Key       string // the account's shared key
	Container string
}

// Azurite describes the Azurite server of scripts/test-servers
// (DISTRIBUTOR_TEST_AZURE_ENDPOINT, _ACCOUNT, _KEY, _CONTAINER) and
// creates its container if it is missing. It skips the test (fails it
// under CI=true) when that server is not configured. Tests share the
// container: give each its own prefix (see Open).
func Azurite(t testing.TB) *Server {
	t.Helper()
	env := storagetest.ServerEnv(t, "Azurite", "DISTRIBUTOR_TEST_AZURE_ENDPOINT", "DISTRIBUTOR_TEST_AZURE_ACCOUNT",
		"DISTRIBUTOR_TEST_AZURE_KEY", "DISTRIBUTOR_TEST_AZURE_CONTAINER")
	u, err := url.Parse(env[0])
	if err != nil || u.Host == "" {
		t.Fatalf("DISTRIBUTOR_TEST_AZURE_ENDPOINT %q: want http://host:port/account (%v)", env[0], err)
	}
	srv := &Server{Endpoint: strings.TrimSuffix(env[0], "/"), Addr: u.Host, Account: env[1], Key: env[2], Container: env[3]}
	if _, err := srv.Client(t, srv.Container).Create(context.Background(), nil); err != nil &&
		!bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		t.Fatalf("create container %s: %v", srv.Container, err)
	}
	return srv
}

// Client is an independent client of the container name (the SDK's own,
// with the shared key), to check what the adapter wrote.
func (srv *Server) Client(t testing.TB, name string) *container.Client {
	t.Helper()
	cred, err := container.NewSharedKeyCredential(srv.Account, srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := container.NewClientWithSharedKeyCredential(srv.Endpoint+"/"+name, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewContainer creates a container of its own for the test t, deleted
// with its blobs when the test ends, and returns its name.
func (srv *Server) NewContainer(t testing.TB) string {
	t.Helper()
	name := "t-" + strings.ToLower(rand.Text()[:12])
	c := srv.Client(t, name)
	if _, err := c.Create(t.Context(), nil); err != nil {
		t.Fatalf("create container %s: %v", name, err)
	}
	t.Cleanup(func() { c.Delete(context.Background(), nil) })
	return name
}

// SAS returns a shared access signature (a query string) for the
// container name that allows everything the store does, valid for an
// hour.
func (srv *Server) SAS(t testing.TB, name string) string {
	t.Helper()
	cred, err := container.NewSharedKeyCredential(srv.Account, srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	perms := sas.ContainerPermissions{Read: true, Add: true, Create: true, Write: true, Delete: true, List: true}
	q, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
		Permissions: perms.String(), ContainerName: name}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	return q.Encode()
}

// Getenv is the credential environment of the server: its shared key.
func (srv *Server) Getenv(k string) string {
	if k == "AZURE_STORAGE_KEY" {
		return srv.Key
	}
	return ""
}

// Options returns the adapter's Options for the root prefix ("" for the
// container's root).
func (srv *Server) Options(prefix string) azure.Options {
	return azure.Options{Account: srv.Account, Container: srv.Container, Prefix: prefix, Endpoint: srv.Endpoint, Getenv: srv.Getenv}
}

// UniquePrefix returns a prefix of its own for the test t, whose blobs
// are deleted when the test ends.
func (srv *Server) UniquePrefix(t testing.TB) string {
	t.Helper()
	prefix := "test/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + rand.Text()[:8]
	t.Cleanup(func() {
		st, err := azure.New(context.Background(), srv.Options(prefix))
		if err != nil {
			return
		}
		defer st.Close()
		var keys []string
		st.List(context.Background(), "", func(i storage.Info) error {
			keys = append(keys, i.Path)
			return nil
		})
		for _, k := range keys {
			st.Delete(context.Background(), k)
		}
	})
	return prefix
}

// Open opens a store on a fresh prefix of the container (see
// UniquePrefix); it is closed when the test ends.
func (srv *Server) Open(t testing.TB) *azure.Store {
	t.Helper()
	return OpenWith(t, srv.Options(srv.UniquePrefix(t)))
}

// OpenWith opens a store with opts; it is closed when the test ends.
func OpenWith(t testing.TB, opts azure.Options) *azure.Store {
	t.Helper()
	st, err := azure.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
