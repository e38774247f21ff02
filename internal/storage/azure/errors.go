package azure

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// Error codes (x-ms-error-code) the store tells apart.
const (
	codeBlobNotFound      = "BlobNotFound"
	codeBlobAlreadyExists = "BlobAlreadyExists"
	codeContainerNotFound = "ContainerNotFound"
)

// explain turns an SDK error into an *objstore.ResponseError (404
// BlobNotFound matches storage.ErrNotExist) and takes the query (a SAS) out
// of a transport error's URL; other errors stay as they are.
func explain(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.RawQuery != "" {
			query := "?" + u.RawQuery
			ue.URL = strings.Replace(ue.URL, query, "?[query removed]", 1)
			if msg := err.Error(); strings.Contains(msg, query) { // formatted before
				return &redacted{msg: strings.ReplaceAll(msg, query, "?[query removed]"), err: err}
			}
		}
	}
	var resp *azcore.ResponseError
	if !errors.As(err, &resp) {
		return err
	}
	e := &objstore.ResponseError{Status: resp.StatusCode, Code: resp.ErrorCode, Text: resp.ErrorCode, Err: resp}
	switch {
	case resp.ErrorCode == codeBlobNotFound || resp.StatusCode == http.StatusNotFound && resp.ErrorCode == "":
		e.Means = storage.ErrNotExist
	case resp.ErrorCode == codeContainerNotFound:
		e.Hint = "the container does not exist"
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		e.Hint = "check the credentials (AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN or " +
			"Microsoft Entra ID) and their role on the container (see docs/backends.md)"
	}
	return e
}

// redacted is an error with its own message over the one it wraps: a URL's
// query taken out, or the lines of Microsoft Entra ID's account joined.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }

func (e *redacted) Unwrap() error { return e.err }

func status(err error) (int, string, bool) {
	var resp *azcore.ResponseError
	if errors.As(err, &resp) {
		return resp.StatusCode, resp.ErrorCode, true
	}
	return 0, "", false
}

// IsTransient implements storage.Store. Transient, besides storage.IsTransient:
// an Azure error with status 408, 429, 500 or 502-504; a credential that
// Microsoft Entra ID refused or could not find is final.
func (s *Store) IsTransient(err error) bool {
	var auth *azidentity.AuthenticationFailedError
	if err == nil || storage.IsPermanent(err) || errors.As(err, &auth) {
		return false
	}
	if code, _, ok := status(err); ok {
		return objstore.TransientStatus(code)
	}
	return storage.IsTransient(err)
}
