package storagetest

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

	"github.com/distributor-dev/distributor/internal/storage"
)

// TransientCase is an error and whether Store.IsTransient must call it
// transient.
type TransientCase struct {
	Name string
	Err  error
	Want bool
}

// Classify checks isTransient (a Store's IsTransient) against cases.
func Classify(t *testing.T, isTransient func(error) bool, cases []TransientCase) {
	t.Helper()
	for _, c := range cases {
		if got := isTransient(c.Err); got != c.Want {
			t.Errorf("%s: IsTransient(%v) = %v, want %v", c.Name, c.Err, got, c.Want)
		}
	}
}

// testIsTransient: every store classifies the storage errors and the
// network-level failures as storage.IsTransient does.
func testIsTransient(t *testing.T, s storage.Store) {
	Classify(t, s.IsTransient, NetworkCases())
}

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// AdapterErr wraps err as the adapters do: store, operation, path.
func AdapterErr(err error) error { return fmt.Errorf("scheme://u@h:22/r: get a/b: %w", err) }

func opErr(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno)}
}

// NetworkCases are synthetic errors shaped like those of the adapters and
// their libraries, which every adapter classifies alike: the storage
// errors and the other permanent ones, and the network-level failures
// (see storage.IsPermanent and storage.IsTransient).
func NetworkCases() []TransientCase {
	return []TransientCase{
		{"nil", nil, false},
		{"plain", errors.New("boom"), false},
		{"not exist", AdapterErr(storage.ErrNotExist), false},
		{"not object", AdapterErr(fmt.Errorf("%w: %w", storage.ErrNotObject, storage.ErrNotExist)), false},
		{"precondition", AdapterErr(storage.ErrPrecondition), false},
		{"invalid path", AdapterErr(storage.ErrInvalidPath), false},
		{"closed store", AdapterErr(os.ErrClosed), false},
		{"permission", AdapterErr(fs.ErrPermission), false},
		{"exist", AdapterErr(fs.ErrExist), false},
		{"unsupported", AdapterErr(errors.ErrUnsupported), false},
		{"canceled", AdapterErr(context.Canceled), false},
		{"internal deadline", AdapterErr(fmt.Errorf("connect: no answer within 1s (dial timeout): %w", context.DeadlineExceeded)), true},
		{"EOF", AdapterErr(io.EOF), true},
		{"unexpected EOF", AdapterErr(io.ErrUnexpectedEOF), true},
		{"net closed", AdapterErr(net.ErrClosed), true},
		{"deadline", AdapterErr(os.ErrDeadlineExceeded), true},
		{"reset", AdapterErr(opErr("read", syscall.ECONNRESET)), true},
		{"refused", AdapterErr(opErr("dial", syscall.ECONNREFUSED)), true},
		{"broken pipe", AdapterErr(fmt.Errorf("write: %w", syscall.EPIPE)), true},
		{"unreachable", AdapterErr(opErr("dial", syscall.EHOSTUNREACH)), true},
		{"bare errno", AdapterErr(syscall.ETIMEDOUT), true},
		{"other errno", AdapterErr(syscall.ENOSPC), false},
		{"net timeout", AdapterErr(timeoutError{}), true},
		{"op error", AdapterErr(&net.OpError{Op: "read", Net: "tcp", Err: errors.New("something")}), true},
		{"tls alert", AdapterErr(&net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")}), false},
		{"dns not found", AdapterErr(&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}), false},
		{"dns temporary", AdapterErr(&net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}), true},
		{"dns timeout", AdapterErr(&net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}), true},
		{"url reset", AdapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: opErr("read", syscall.ECONNRESET)}), true},
		{"url EOF", AdapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: io.EOF}), true},
		{"url x509", AdapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: x509.UnknownAuthorityError{}}), false},
		{"url x509 verify", AdapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: &tls.CertificateVerificationError{Err: x509.HostnameError{}}}), false},
		{"tls header", AdapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}), false},
		{"url other", AdapterErr(&url.Error{Op: "Get", URL: "https://h/b/k", Err: errors.New("unsupported protocol scheme")}), false},
		{"ssh handshake EOF", AdapterErr(fmt.Errorf("connect: ssh: handshake failed: %w", io.EOF)), true},
		// Permanent wins over transient in an error that wraps both.
		{"not exist and reset", fmt.Errorf("%w (%w)", storage.ErrNotExist, syscall.ECONNRESET), false},
		{"canceled and EOF", fmt.Errorf("%w (%w)", context.Canceled, io.EOF), false},
	}
}
