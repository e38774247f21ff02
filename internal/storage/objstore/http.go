// What the adapters share beside the Store: their HTTP transport, the
// statuses worth a retry, their error responses, their configuration blocks.

package objstore

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/deadline"
)

// Transport returns a clone of base with the timeouts of package deadline
// installed (around base's dialer), a zero one meaning its default (10s
// to connect and for TLS, 30s for a response's headers and of no
// progress), and a second's wait for "100 Continue" (see
// Write.ExpectContinue). A nil base is http.DefaultTransport without its
// dialer (deadline's has a keep-alive).
func Transport(base *http.Transport, dial, response, idle time.Duration) *http.Transport {
	var tr *http.Transport
	if base == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = nil
	} else {
		tr = base.Clone()
	}
	deadline.Install(tr, deadline.Timeouts{Dial: orDefault(dial, 10*time.Second),
		Response: orDefault(response, 30*time.Second), Idle: orDefault(idle, 30*time.Second)})
	tr.ExpectContinueTimeout = time.Second
	return tr
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// TransientStatus reports whether an HTTP status asks to try again: the
// server timed the request out, was overloaded or failed internally.
func TransientStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// DecodeEndpoint reads the optional "endpoint" field of b: a URL without
// credentials (they come from creds), query or fragment (queryHint, if
// any, says where a query belongs). It returns "" when the field is unset
// or refused (b has the error then).
func DecodeEndpoint(b storage.Block, creds, queryHint string) string {
	s, ok := b.String("endpoint", false)
	if !ok || s == "" {
		return ""
	}
	u, ok := b.URL("endpoint", s)
	switch {
	case !ok:
	case u.User != nil:
		b.Errorf("endpoint", "%q must not contain credentials (they come from %s)", s, creds)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		b.Errorf("endpoint", "%q must not have a query or fragment%s", s, queryHint)
	default:
		return s
	}
	return ""
}

// DecodeTimeouts reads the dial_timeout, response_timeout and
// idle_timeout fields of b.
func DecodeTimeouts(b storage.Block) (dial, response, idle time.Duration) {
	return b.Duration("dial_timeout"), b.Duration("response_timeout"), b.Duration("idle_timeout")
}

// ParseEndpoint parses a server's URL: http or https, with a host, and no
// query, fragment or credentials, nor (unless withPath) a path; give says
// in its error what an endpoint has instead ("only scheme, host and port").
func ParseEndpoint(endpoint string, withPath bool, give string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil:
		return nil, fmt.Errorf("endpoint: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("endpoint %q: the scheme must be http or https", endpoint)
	case u.Host == "":
		return nil, fmt.Errorf("endpoint %q has no host", endpoint)
	case !withPath && u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "", u.User != nil:
		return nil, fmt.Errorf("endpoint %q: give %s", endpoint, give)
	}
	return u, nil
}

// DefaultMaxAttempts is the adapters' default number of sends of a request.
const DefaultMaxAttempts = 3

// Getenv returns getenv, or for nil one that finds no variable set.
func Getenv(getenv func(string) string) func(string) string {
	if getenv == nil {
		return func(string) string { return "" }
	}
	return getenv
}

// ResponseError is an object store's error response: its text (without
// the client library's, which may list the request's URL and headers),
// the storage error it stands for and what to do about it.
type ResponseError struct {
	Status int    // HTTP status, 0 if unknown
	Code   string // the store's error code
	Text   string // the code and message; empty: the status's text
	Hint   string // what to do, or empty
	Means  error  // storage.ErrNotExist, storage.ErrPrecondition or nil
	Err    error  // the client library's error, or nil
}

func (e *ResponseError) Error() string {
	msg := e.Text
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Status != 0 {
		msg += " (HTTP " + strconv.Itoa(e.Status) + ")"
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Is reports whether target is the storage error e stands for.
func (e *ResponseError) Is(target error) bool { return e.Means != nil && target == e.Means }

// Unwrap returns the client library's error.
func (e *ResponseError) Unwrap() error { return e.Err }
