package azure

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/deadline"
)

func response(status int, code string) error {
	return &azcore.ResponseError{StatusCode: status, ErrorCode: code}
}

func TestIsTransient(t *testing.T) {
	var s Store
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{explain(response(503, "ServerBusy")), true},
		{explain(response(500, "InternalError")), true},
		{explain(response(500, "OperationTimedOut")), true},
		{explain(response(429, "")), true},
		{explain(response(408, "")), true},
		{explain(response(412, "ConditionNotMet")), false},
		{explain(response(409, "BlobAlreadyExists")), false},
		{explain(response(404, "BlobNotFound")), false},
		{explain(response(403, "AuthenticationFailed")), false},
		{fmt.Errorf("%w: blob exists", storage.ErrPrecondition), false},
		{fmt.Errorf("wrapped: %w", io.ErrUnexpectedEOF), true},
		{&url.Error{Op: "Put", URL: "http://x", Err: syscall.ECONNRESET}, true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{&deadline.StallError{Err: os.ErrDeadlineExceeded}, true},
		{&url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}, false},
		{&net.DNSError{Err: "no such host", IsNotFound: true}, false},
		{context.Canceled, false},
		{os.ErrClosed, false},
		{errors.New("something else"), false},
	} {
		if got := s.IsTransient(tc.err); got != tc.want {
			t.Errorf("IsTransient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestExplain: a 404 BlobNotFound matches ErrNotExist and reads as its
// code and status; a transport error's URL loses its query (a SAS).
func TestExplain(t *testing.T) {
	err := explain(response(http.StatusNotFound, "BlobNotFound"))
	if !errors.Is(err, storage.ErrNotExist) || err.Error() != "BlobNotFound (HTTP 404)" {
		t.Errorf("explain(404) = %v", err)
	}
	err = explain(fmt.Errorf("send: %w", &url.Error{Op: "Put", URL: "http://h/c/b?sv=1&sig=SECRET", Err: io.EOF}))
	if strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "http://h/c/b?[query removed]") {
		t.Errorf("explained transport error %q", err)
	}
}
