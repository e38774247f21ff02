package azure_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/azure"
)

// TestNoCredentialHTTPS: on an https:// endpoint, with no connection
// string, key or SAS and a Microsoft Entra ID chain that finds nothing, the
// first request fails, before anything is sent, with one line that says
// what was tried (the http:// case, on Azurite, is
// TestMessageAzureNoCredential). The chain is narrowed to the environment
// (AZURE_TOKEN_CREDENTIALS), so that no managed identity endpoint off
// loopback is asked.
func TestNoCredentialHTTPS(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	t.Cleanup(srv.Close)
	t.Setenv("AZURE_TOKEN_CREDENTIALS", "EnvironmentCredential")
	for _, k := range []string{"AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_USERNAME"} {
		t.Setenv(k, "")
	}
	_, err := azure.New(t.Context(), azure.Options{Account: "reports", Container: "site", Prefix: "www", Endpoint: srv.URL + "/reports"})
	const (
		want = "azure://reports/site/www: list container site: no Azure credential found (tried AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY " +
			"and AZURE_STORAGE_SAS_TOKEN: not set; Microsoft Entra ID: DefaultAzureCredential: failed to acquire a token. " +
			"Attempted credentials: EnvironmentCredential: missing environment variable AZURE_TENANT_ID"
		wantEnd = "): set one of them, or sign in to Microsoft Entra ID (see docs/backends.md)"
	)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), wantEnd) || strings.Contains(err.Error(), "\n") {
		t.Errorf("New: %v\nwant %s...%s, on one line", err, want, wantEnd)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}
