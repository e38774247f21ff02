// S3 error responses, and what each means to a caller.

package s3

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
	"github.com/minio/minio-go/v7"
)

// explain turns a minio-go error response into an *objstore.ResponseError
// (NoSuchKey matches storage.ErrNotExist); other errors stay as they are.
func explain(err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "" && resp.StatusCode == 0 {
		return err
	}
	e := &objstore.ResponseError{Status: resp.StatusCode, Code: resp.Code, Text: resp.Code}
	if resp.Message != "" {
		e.Text += ": " + resp.Message
	}
	switch {
	case resp.Code == "NoSuchKey":
		e.Means = storage.ErrNotExist
	case resp.Code == "NoSuchBucket":
		e.Hint = "the bucket does not exist"
	case resp.StatusCode == http.StatusForbidden || credentialCodes[resp.Code]:
		e.Hint = "check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, the shared credentials file or the instance role) and their permissions (see docs/backends.md)"
	}
	return e
}

// credentialCodes are the error codes of rejected credentials (the last
// is versitygw's for an unknown access key).
var credentialCodes = map[string]bool{
	"AccessDenied": true, "InvalidAccessKeyId": true, "SignatureDoesNotMatch": true,
	"InvalidToken": true, "ExpiredToken": true, "TokenRefreshRequired": true, "XAdminUserNotFound": true,
}

// IsTransient implements storage.Store. Transient, besides storage.IsTransient:
// an S3 error with status 408, 429, 499, 500, 502-504 or 520 or a code of
// retryCodes, and a connection closed before the answer (minioEOF).
func (s *Store) IsTransient(err error) bool {
	if err == nil || storage.IsPermanent(err) {
		return false
	}
	if status, code, ok := response(err); ok {
		// Besides objstore's: nginx's "client closed request" and
		// Cloudflare's "unknown origin error", which proxies send.
		return retryCodes[code] || objstore.TransientStatus(status) || status == 499 || status == 520
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil && strings.HasPrefix(ue.Err.Error(), minioEOF) {
		return true
	}
	return storage.IsTransient(err)
}

// minioEOF starts the error minio-go puts in a *url.Error instead of one
// mentioning EOF: the connection closed before the answer came.
const minioEOF = "Connection closed by foreign host"

// response returns the status and code of an S3 error (explain's or minio-go's).
func response(err error) (status int, code string, ok bool) {
	var se *objstore.ResponseError
	if errors.As(err, &se) {
		return se.Status, se.Code, true
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.StatusCode != 0 || resp.Code != "") {
		return resp.StatusCode, resp.Code, true
	}
	var presp *minio.ErrorResponse
	if errors.As(err, &presp) && presp != nil && (presp.StatusCode != 0 || presp.Code != "") {
		return presp.StatusCode, presp.Code, true
	}
	return 0, "", false
}

// retryCodes are the S3 error codes that ask the client to try again.
var retryCodes = map[string]bool{
	"RequestTimeout": true, "SlowDown": true, "SlowDownRead": true, "SlowDownWrite": true,
	"InternalError": true, "ServiceUnavailable": true, "Throttling": true, "ThrottlingException": true,
	"RequestThrottled": true, "RequestLimitExceeded": true,
}
