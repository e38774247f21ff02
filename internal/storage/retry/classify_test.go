package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/minio/minio-go/v7"
	sftplib "github.com/pkg/sftp"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
)

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// adapterErr wraps err as the adapters do: store, operation, path.
func adapterErr(err error) error { return fmt.Errorf("sftp://u@h:22/r: get a/b: %w", err) }

func opErr(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno)}
}

// TestIsTransient classifies synthetic errors shaped like those of the
// adapters and their libraries (the net tests classify real ones).
func TestIsTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("boom"), false},
		{"not exist", adapterErr(storage.ErrNotExist), false},
		{"not object", adapterErr(fmt.Errorf("%w: %w", storage.ErrNotObject, storage.ErrNotExist)), false},
		{"precondition", adapterErr(storage.ErrPrecondition), false},
		{"invalid path", adapterErr(storage.ErrInvalidPath), false},
		{"closed store", adapterErr(os.ErrClosed), false},
		{"permission", adapterErr(fs.ErrPermission), false},
		{"exist", adapterErr(fs.ErrExist), false},
		{"unsupported", adapterErr(errors.ErrUnsupported), false},
		{"canceled", adapterErr(context.Canceled), false},
		{"internal deadline", adapterErr(fmt.Errorf("connect: no answer within 1s (dial timeout): %w", context.DeadlineExceeded)), true},
		{"EOF", adapterErr(io.EOF), true},
		{"unexpected EOF", adapterErr(io.ErrUnexpectedEOF), true},
		{"net closed", adapterErr(net.ErrClosed), true},
		{"deadline", adapterErr(os.ErrDeadlineExceeded), true},
		{"reset", adapterErr(opErr("read", syscall.ECONNRESET)), true},
		{"refused", adapterErr(opErr("dial", syscall.ECONNREFUSED)), true},
		{"broken pipe", adapterErr(fmt.Errorf("write: %w", syscall.EPIPE)), true},
		{"unreachable", adapterErr(opErr("dial", syscall.EHOSTUNREACH)), true},
		{"bare errno", adapterErr(syscall.ETIMEDOUT), true},
		{"other errno", adapterErr(syscall.ENOSPC), false},
		{"net timeout", adapterErr(timeoutError{}), true},
		{"op error", adapterErr(&net.OpError{Op: "read", Net: "tcp", Err: errors.New("something")}), true},
		{"tls alert", adapterErr(&net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}), false},
		{"dns not found", adapterErr(&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}), false},
		{"dns temporary", adapterErr(&net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}), true},
		{"dns timeout", adapterErr(&net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}), true},
		{"url reset", adapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: opErr("read", syscall.ECONNRESET)}), true},
		{"url EOF", adapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: io.EOF}), true},
		{"url x509", adapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: x509.UnknownAuthorityError{}}), false},
		{"url x509 verify", adapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: &tls.CertificateVerificationError{Err: x509.HostnameError{}}}), false},
		{"tls header", adapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}), false},
		{"minio EOF", adapterErr(&url.Error{Op: "Put", URL: "https://h/b/k", Err: errors.New("Connection closed by foreign host https://h/b/k. Retry again.")}), true},
		{"url other", adapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: errors.New("unsupported protocol scheme")}), false},
		{"sftp connection lost", adapterErr(sftplib.ErrSSHFxConnectionLost), true},
		{"sftp no connection", adapterErr(sftplib.ErrSSHFxNoConnection), true},
		{"sftp status lost", adapterErr(&sftplib.StatusError{Code: uint32(sftplib.ErrSSHFxConnectionLost)}), true},
		{"sftp status failure", adapterErr(&sftplib.StatusError{Code: uint32(sftplib.ErrSSHFxFailure)}), false},
		{"sftp status unsupported", adapterErr(&sftplib.StatusError{Code: uint32(sftplib.ErrSSHFxOpUnsupported)}), false},
		{"sftp status permission", adapterErr(&sftplib.StatusError{Code: uint32(sftplib.ErrSSHFxPermissionDenied)}), false},
		{"host key", adapterErr(fmt.Errorf("connect: %w", &sftp.HostKeyError{Host: "h", KeyType: "ssh-ed25519"})), false},
		{"ssh auth", adapterErr(errors.New("connect: ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain")), false},
		{"ssh handshake EOF", adapterErr(fmt.Errorf("connect: ssh: handshake failed: %w", io.EOF)), true},
		{"minio 503", adapterErr(minio.ErrorResponse{StatusCode: 503, Code: "SlowDown"}), true},
		{"minio 500", adapterErr(minio.ErrorResponse{StatusCode: 500, Code: "InternalError"}), true},
		{"minio 502", adapterErr(minio.ErrorResponse{StatusCode: 502}), true},
		{"minio 504", adapterErr(minio.ErrorResponse{StatusCode: 504}), true},
		{"minio 429", adapterErr(minio.ErrorResponse{StatusCode: 429}), true},
		{"minio 400 RequestTimeout", adapterErr(minio.ErrorResponse{StatusCode: 400, Code: "RequestTimeout"}), true},
		{"minio 400", adapterErr(minio.ErrorResponse{StatusCode: 400, Code: "InvalidArgument"}), false},
		{"minio 501", adapterErr(minio.ErrorResponse{StatusCode: 501, Code: "NotImplemented"}), false},
		{"minio 403", adapterErr(minio.ErrorResponse{StatusCode: 403, Code: "AccessDenied"}), false},
		{"minio 400 ExpiredToken", adapterErr(minio.ErrorResponse{StatusCode: 400, Code: "ExpiredToken"}), false},
		{"minio 409", adapterErr(minio.ErrorResponse{StatusCode: 409, Code: "ConditionalRequestConflict"}), false},
		{"minio pointer 503", adapterErr(&minio.ErrorResponse{StatusCode: 503, Code: "SlowDown"}), true},
		// The s3 adapter's *s3Error does not expose the response: its text.
		{"s3 text 503", errors.New("s3://bucket: get a: SlowDown: Please reduce your request rate. (HTTP 503)"), true},
		{"s3 text HEAD 503", errors.New("s3://bucket: stat a: 503 Service Unavailable: 503 Service Unavailable (HTTP 503)"), true},
		{"s3 text 400 RequestTimeout", errors.New("s3://bucket: put a: RequestTimeout: Your socket connection to the server was not read from or written to within the timeout period. (HTTP 400)"), true},
		{"s3 text 400", errors.New("s3://bucket: stat a: 400 Bad Request: 400 Bad Request (HTTP 400)"), false},
		{"s3 text 501", errors.New("s3://bucket: put-if a: NotImplemented: A header you provided implies functionality that is not implemented (HTTP 501)"), false},
		{"s3 text 403", errors.New("s3://bucket: get a: AccessDenied: Access Denied. (HTTP 403); check the credentials"), false},
		// Permanent wins over transient in an error that wraps both.
		{"not exist and reset", fmt.Errorf("%w (%w)", storage.ErrNotExist, syscall.ECONNRESET), false},
		{"canceled and EOF", fmt.Errorf("%w (%w)", context.Canceled, io.EOF), false},
		{"host key and EOF", fmt.Errorf("%w (%w)", &sftp.HostKeyError{}, io.EOF), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTransient(tt.err); got != tt.want {
				t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
