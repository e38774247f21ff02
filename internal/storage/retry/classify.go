package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/minio/minio-go/v7"
	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
)

// IsTransient reports whether err is a failure that sending the same
// request again may cure: the network or the server failed on the way,
// rather than the server refusing the request. It does not look at any
// context: Store stops retrying once its call's context is done, whatever
// the error.
//
// Never transient (checked first, so that they win in an error that wraps
// several): storage.ErrNotExist, ErrNotObject, ErrPrecondition and
// ErrInvalidPath; os.ErrClosed (a closed store); fs.ErrPermission and
// fs.ErrExist; errors.ErrUnsupported; context.Canceled; an SSH host key
// that known_hosts does not vouch for (*sftp.HostKeyError, knownhosts
// errors); rejected SSH authentication; TLS and certificate failures; a
// DNS name that does not exist.
//
// Transient:
//   - an S3 error response with HTTP status 408, 429, 499, 500, 502, 503,
//     504 or 520, or an S3 code that asks for a retry (RequestTimeout,
//     SlowDown, InternalError, ServiceUnavailable, the Throttling codes);
//     every other S3 error response is final (403, 404, 409, 501, ...);
//   - an SFTP status of "no connection" or "connection lost" (every other
//     SFTP status, such as the generic "failure", is final);
//   - a connection that broke or could not be made: io.EOF (which
//     minio-go reports as a *url.Error saying "Connection closed by
//     foreign host"),
//     io.ErrUnexpectedEOF, net.ErrClosed, ECONNRESET, ECONNREFUSED,
//     ECONNABORTED, EPIPE, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH, ENETDOWN,
//     ENETRESET, any *net.OpError, a timeout (a net.Error whose Timeout
//     is true, os.ErrDeadlineExceeded, context.DeadlineExceeded of an
//     internal deadline such as a dial timeout), a DNS lookup that timed
//     out or failed temporarily.
//
// Anything else is final: when unsure, do not retry.
func IsTransient(err error) bool {
	if err == nil || isPermanent(err) {
		return false
	}
	if status, code, ok := s3Response(err); ok {
		return s3Transient(status, code)
	}
	var se *sftplib.StatusError
	if errors.As(err, &se) {
		c := se.FxCode()
		return c == sftplib.ErrSSHFxNoConnection || c == sftplib.ErrSSHFxConnectionLost
	}
	for _, target := range transientErrors {
		if errors.Is(err, target) {
			return true
		}
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil && strings.HasPrefix(ue.Err.Error(), minioEOF) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTimeout || dns.IsTemporary
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true // a socket operation failed (TLS refusals are permanent, above)
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// minioEOF starts the error minio-go puts in a *url.Error instead of one
// mentioning EOF: the connection closed before the answer came.
const minioEOF = "Connection closed by foreign host"

// permanentErrors are never transient, whatever else an error wraps.
var permanentErrors = []error{
	storage.ErrNotObject, storage.ErrNotExist, storage.ErrPrecondition, storage.ErrInvalidPath,
	os.ErrClosed, fs.ErrPermission, fs.ErrExist, errors.ErrUnsupported, context.Canceled,
}

// transientErrors mean that the connection broke, could not be made or
// timed out.
var transientErrors = []error{
	sftplib.ErrSSHFxConnectionLost, sftplib.ErrSSHFxNoConnection,
	io.EOF, io.ErrUnexpectedEOF, net.ErrClosed, os.ErrDeadlineExceeded, context.DeadlineExceeded,
	syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT,
	syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN, syscall.ENETRESET,
}

// isPermanent reports whether err is one of the failures that are final
// even when they also wrap a network error.
func isPermanent(err error) bool {
	for _, target := range permanentErrors {
		if errors.Is(err, target) {
			return true
		}
	}
	var (
		hostKey   *sftp.HostKeyError
		keyErr    *knownhosts.KeyError
		revoked   *knownhosts.RevokedError
		authority x509.UnknownAuthorityError
		invalid   x509.CertificateInvalidError
		hostname  x509.HostnameError
		verify    *tls.CertificateVerificationError
		header    tls.RecordHeaderError
		alert     tls.AlertError
		dns       *net.DNSError
		op        *net.OpError
	)
	switch {
	case errors.As(err, &hostKey), errors.As(err, &keyErr), errors.As(err, &revoked):
		return true
	case errors.As(err, &authority), errors.As(err, &invalid), errors.As(err, &hostname),
		errors.As(err, &verify), errors.As(err, &header), errors.As(err, &alert):
		return true
	case errors.As(err, &dns) && dns.IsNotFound:
		return true
	case errors.As(err, &op) && op.Op == "remote error":
		return true // crypto/tls: the server sent a TLS alert
	}
	// golang.org/x/crypto/ssh has no type for a refused authentication.
	return strings.Contains(err.Error(), "ssh: unable to authenticate")
}

// s3Response returns the HTTP status and S3 error code of err if it is
// an S3 error response. It finds a minio.ErrorResponse in err's chain or,
// failing that, reads the " (HTTP 503)" the s3 adapter's error messages
// end with (its error type does not expose the response), in which case
// code is one of the retry codes s3Transient knows if the message names
// one, else "".
func s3Response(err error) (status int, code string, ok bool) {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && (resp.StatusCode != 0 || resp.Code != "") {
		return resp.StatusCode, resp.Code, true
	}
	var presp *minio.ErrorResponse
	if errors.As(err, &presp) && presp != nil && (presp.StatusCode != 0 || presp.Code != "") {
		return presp.StatusCode, presp.Code, true
	}
	msg := err.Error()
	m := httpStatus.FindAllStringSubmatch(msg, -1)
	if m == nil {
		return 0, "", false
	}
	status, convErr := strconv.Atoi(m[len(m)-1][1])
	if convErr != nil {
		return 0, "", false
	}
	return status, retryCode.FindString(msg), true
}

var (
	// httpStatus matches the status the s3 adapter's errors show.
	httpStatus = regexp.MustCompile(`\(HTTP ([1-5][0-9][0-9])\)`)
	// retryCode matches the S3 error codes of s3RetryCodes in a message.
	retryCode = regexp.MustCompile(`\b(RequestTimeout|SlowDown|SlowDownRead|SlowDownWrite|InternalError|ServiceUnavailable|Throttling|ThrottlingException|RequestThrottled|RequestLimitExceeded)\b`)
)

// s3RetryCodes are the S3 error codes that ask the client to try again.
var s3RetryCodes = map[string]bool{
	"RequestTimeout": true, "SlowDown": true, "SlowDownRead": true, "SlowDownWrite": true,
	"InternalError": true, "ServiceUnavailable": true, "Throttling": true, "ThrottlingException": true,
	"RequestThrottled": true, "RequestLimitExceeded": true,
}

// s3Transient reports whether an S3 error response is worth retrying: the
// server was overloaded, failed internally or timed out the request.
func s3Transient(status int, code string) bool {
	if s3RetryCodes[code] {
		return true
	}
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, 499, // nginx: client closed request
		http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, 520: // Cloudflare: unknown origin error
		return true
	}
	return false
}
