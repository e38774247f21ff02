package storage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// IsPermanent reports whether err is a failure that no repetition can
// cure, whatever else it wraps: ErrNotExist, ErrNotObject,
// ErrPrecondition and ErrInvalidPath; os.ErrClosed (a closed store);
// fs.ErrPermission and fs.ErrExist; errors.ErrUnsupported;
// context.Canceled; TLS and certificate failures (a TLS alert from the
// server included); a DNS name that does not exist. An adapter's
// Store.IsTransient checks it first, so that these win in an error that
// also wraps a network failure.
func IsPermanent(err error) bool {
	for _, target := range permanentErrors {
		if errors.Is(err, target) {
			return true
		}
	}
	var (
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
	case errors.As(err, &authority), errors.As(err, &invalid), errors.As(err, &hostname),
		errors.As(err, &verify), errors.As(err, &header), errors.As(err, &alert):
		return true
	case errors.As(err, &dns) && dns.IsNotFound:
		return true
	case errors.As(err, &op) && op.Op == "remote error":
		return true // crypto/tls: the server sent a TLS alert
	}
	return false
}

// IsTransient is the part of Store.IsTransient that every adapter shares:
// it reports whether err, not IsPermanent, is a network-level failure that
// sending the same request again may cure: a connection that broke or could
// not be made (transientErrors, any *net.OpError), a timeout (including
// context.DeadlineExceeded of an internal deadline such as a dial timeout),
// a DNS lookup that timed out or failed temporarily. When unsure, do not
// retry. An adapter checks its protocol's statuses before falling back to this.
func IsTransient(err error) bool {
	if err == nil || IsPermanent(err) {
		return false
	}
	for _, target := range transientErrors {
		if errors.Is(err, target) {
			return true
		}
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

// permanentErrors are never transient, whatever else an error wraps.
var permanentErrors = []error{
	ErrNotObject, ErrNotExist, ErrPrecondition, ErrInvalidPath,
	os.ErrClosed, fs.ErrPermission, fs.ErrExist, errors.ErrUnsupported, context.Canceled,
}

// transientErrors mean that the connection broke, could not be made or timed out.
var transientErrors = []error{
	io.EOF, io.ErrUnexpectedEOF, net.ErrClosed, os.ErrDeadlineExceeded, context.DeadlineExceeded,
	syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT,
	syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN, syscall.ENETRESET,
}
