// The HTTP transport: deadlines, TLS, Expect: 100-continue.

package s3

import (
	"net/http"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage/objstore"
	"github.com/minio/minio-go/v7"
)

// newTransport returns the transport with opts's timeouts (Options.Transport).
func newTransport(opts *Options, secure bool) (http.RoundTripper, error) {
	base, ok := opts.Transport.(*http.Transport)
	switch {
	case opts.Transport == nil:
		def, err := minio.DefaultTransport(secure)
		if err != nil {
			return nil, err
		}
		def.DialContext = nil // deadline's, with a keep-alive
		base = def
	case !ok:
		return opts.Transport, nil
	}
	return objstore.Transport(base, opts.DialTimeout, opts.ResponseTimeout, opts.IdleTimeout), nil
}

// expectContinueKey marks the context of a conditional PUT whose request
// asks the server to confirm the condition first (see
// objstore.Write.ExpectContinue).
type expectContinueKey struct{}

// expectTransport adds "Expect: 100-continue" to the PUT requests (with a
// body) whose context expectContinueKey marks. The header is not signed, so
// it can be added after minio-go signed the request.
type expectTransport struct{ http.RoundTripper }

func (t expectTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPut && req.Body != nil && req.Body != http.NoBody &&
		req.Context().Value(expectContinueKey{}) != nil {
		req = req.Clone(req.Context())
		req.Header.Set("Expect", "100-continue")
	}
	return t.RoundTripper.RoundTrip(req)
}

func parseEndpoint(endpoint string) (string, bool, error) {
	if endpoint == "" {
		return "s3.amazonaws.com", true, nil
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint
	}
	u, err := objstore.ParseEndpoint(endpoint, false, "only scheme, host and port")
	if err != nil {
		return "", false, err
	}
	return u.Host, u.Scheme == "https", nil
}
