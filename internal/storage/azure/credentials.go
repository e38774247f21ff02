package azure

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

const (
	envConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	envKey              = "AZURE_STORAGE_KEY"
	envSAS              = "AZURE_STORAGE_SAS_TOKEN"
)

// newClient returns the client of the container cont of account at the
// Blob service URL endpoint, with the first credential found (spec section 3.2):
//
//  1. AZURE_STORAGE_CONNECTION_STRING, a connection string (naming the
//     destination's container URL, so that the overlap check holds);
//  2. AZURE_STORAGE_KEY, the shared key of the account;
//  3. AZURE_STORAGE_SAS_TOKEN, a shared access signature (with or without
//     its leading "?");
//  4. Microsoft Entra ID through azidentity's DefaultAzureCredential:
//     the environment (AZURE_TENANT_ID, AZURE_CLIENT_ID and a secret or
//     certificate), workload identity, managed identity, the Azure CLI's
//     login. It reads the process environment itself, not getenv, and
//     asks for a token at the first request.
//
// Nothing here formats or logs the secrets.
func newClient(account, endpoint, cont string, getenv func(string) string, opts *container.ClientOptions) (*container.Client, error) {
	containerURL := endpoint + "/" + url.PathEscape(cont)
	if cs := getenv(envConnectionString); cs != "" {
		c, err := container.NewClientFromConnectionString(cs, cont, opts)
		if err != nil {
			// The SDK's message does not quote the string.
			return nil, fmt.Errorf("%s: %w", envConnectionString, err)
		}
		if got := withoutQuery(c.URL()); !strings.EqualFold(got, containerURL) {
			return nil, fmt.Errorf("%s names the container %s, the destination %s: set the destination's account and endpoint to match",
				envConnectionString, got, containerURL)
		}
		return c, nil
	}
	if key := getenv(envKey); key != "" {
		cred, err := container.NewSharedKeyCredential(account, key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envKey, err)
		}
		return container.NewClientWithSharedKeyCredential(containerURL, cred, opts)
	}
	if sas := strings.TrimPrefix(getenv(envSAS), "?"); sas != "" {
		if _, err := url.ParseQuery(sas); err != nil {
			return nil, fmt.Errorf("%s is not a query string", envSAS)
		}
		return container.NewClientWithNoCredential(containerURL+"?"+sas, opts)
	}
	tried := "no Azure credential found (tried " + envConnectionString + ", " + envKey + " and " + envSAS + ": not set; Microsoft Entra ID: "
	if strings.HasPrefix(strings.ToLower(endpoint), "http:") {
		return nil, fmt.Errorf("%snot used with an http:// endpoint, whose requests would carry its token unencrypted): set %s "+
			"(Azurite: its account key), %s or %s, or use an https:// endpoint (see docs/backends.md)", tried, envKey, envSAS, envConnectionString)
	}
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: opts.ClientOptions})
	if err != nil {
		return nil, fmt.Errorf("%s%w)", tried, err)
	}
	return container.NewClient(containerURL, entraID{cred, tried}, opts)
}

// entraID is DefaultAzureCredential with its failure on one line, saying
// what was tried when it found no credential.
type entraID struct {
	*azidentity.DefaultAzureCredential
	tried string
}

func (c entraID) GetToken(ctx context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	tok, err := c.DefaultAzureCredential.GetToken(ctx, o)
	if err != nil {
		msg := strings.NewReplacer(":\n\t", ": ", "\n\t\t", " ", "\n\t", "; ", "\n", " ").Replace(err.Error())
		if !errors.As(err, new(*azidentity.AuthenticationFailedError)) {
			msg = c.tried + msg + "): set one of them, or sign in to Microsoft Entra ID (see docs/backends.md)"
		}
		err = &redacted{msg: msg, err: err} // wraps the SDK's error: not retried
	}
	return tok, err
}

func withoutQuery(u string) string {
	u, _, _ = strings.Cut(u, "?")
	return strings.TrimSuffix(u, "/")
}
