package s3

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/distributor-dev/distributor/internal/storage"
)

// IsTransient implements storage.Store. Transient, besides the network
// failures of storage.IsTransient: an S3 error response with HTTP status
// 408, 429, 499, 500, 502, 503, 504 or 520, or with an S3 code that asks
// for a retry (RequestTimeout, SlowDown, InternalError,
// ServiceUnavailable, the Throttling codes); every other S3 error
// response is final (403, 404, 409, 501, ...). minio-go reports a
// connection closed before the answer (io.EOF) as a *url.Error saying
// "Connection closed by foreign host": transient too.
func (s *Store) IsTransient(err error) bool { return isTransient(err) }

func isTransient(err error) bool {
	if err == nil || storage.IsPermanent(err) {
		return false
	}
	if status, code, ok := response(err); ok {
		return retryCodes[code] || retryStatus(status)
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

// response returns the HTTP status and S3 error code of err if it is an
// S3 error response: an *s3Error of this adapter or minio-go's own.
func response(err error) (status int, code string, ok bool) {
	var se *s3Error
	if errors.As(err, &se) {
		return se.resp.StatusCode, se.resp.Code, true
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

// retryStatus reports whether an S3 error response with this HTTP status
// is worth retrying: the server was overloaded, failed internally or
// timed out the request.
func retryStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, 499, // nginx: client closed request
		http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, 520: // Cloudflare: unknown origin error
		return true
	}
	return false
}
