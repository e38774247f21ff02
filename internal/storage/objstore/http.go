// What the adapters share beside the Store: transport, exact upload
// bodies, retryable statuses, error responses, content types.

package objstore

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/deadline"
)

// Transport returns a clone of base with package deadline's timeouts (zero:
// 10s to connect, 30s for headers and of no progress) and a second's wait
// for "100 Continue" (Write.ExpectContinue). A nil base is
// http.DefaultTransport without its dialer (deadline's has a keep-alive).
// It never asks for compression itself, so it decodes nothing: a read
// returns an object's bytes as stored, "Content-Encoding: gzip" or not.
func Transport(base *http.Transport, dial, response, idle time.Duration) *http.Transport {
	var tr *http.Transport
	if base == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = nil
	} else {
		tr = base.Clone()
	}
	deadline.Install(tr, deadline.Timeouts{Dial: cmp.Or(max(dial, 0), 10*time.Second),
		Response: cmp.Or(max(response, 0), 30*time.Second), Idle: cmp.Or(max(idle, 0), 30*time.Second)})
	tr.ExpectContinueTimeout, tr.DisableCompression = time.Second, true
	return tr
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

// ResponseError is an object store's error response, without the client
// library's text (which may list the request's URL and headers).
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

// ExactReader yields exactly size bytes of a reader and fails, without
// yielding the last bytes, if the reader has fewer or more, fails, or its
// context ends: so a body cut short never reaches its declared length, and
// the server stores nothing.
type ExactReader struct {
	ctx  context.Context
	r    io.Reader
	left int64
	read int64
	err  error
	// whole: the last byte was handed on, while ctx was alive; mu orders
	// that against Whole.
	mu    sync.Mutex
	whole bool
}

// NewExactReader returns an ExactReader of size bytes of r. For size 0 it
// checks at once that r has nothing to read (nothing will call Read).
func NewExactReader(ctx context.Context, r io.Reader, size int64) (*ExactReader, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative size %d", size)
	}
	e := &ExactReader{ctx: ctx, r: r, left: size}
	if size == 0 {
		if err := e.checkEnd(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Err returns the failure of the reader (or its context), nil if none:
// the cause of a failed upload, whatever the client made of it.
func (e *ExactReader) Err() error { return e.err }

// Whole reports whether the reader handed on its last byte; once false
// after the context ended, it never will.
func (e *ExactReader) Whole() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.whole
}

// Left returns how many bytes have not been read yet.
func (e *ExactReader) Left() int64 { return e.left }

// Read implements io.Reader.
func (e *ExactReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.left == 0 {
		return 0, io.EOF
	}
	if err := e.ctx.Err(); err != nil {
		e.err = err
		return 0, err
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.read += int64(n)
	e.left -= int64(n)
	switch {
	case err == io.EOF && e.left > 0:
		e.err = fmt.Errorf("short input: got %d of %d bytes", e.read, e.read+e.left)
	case err != nil && err != io.EOF:
		e.err = fmt.Errorf("after %d bytes: %w", e.read, err)
	case e.left == 0:
		e.err = e.checkEnd()
	}
	if e.err != nil {
		return 0, e.err // withhold this chunk: the body stays incomplete
	}
	return n, nil
}

func (e *ExactReader) checkEnd() error {
	var extra [1]byte
	n, err := io.ReadFull(e.r, extra[:])
	switch {
	case n > 0:
		return fmt.Errorf("input is longer than %d bytes", e.read)
	case err != io.EOF:
		return fmt.Errorf("after %d bytes: %w", e.read, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.ctx.Err(); err != nil {
		return err
	}
	e.whole = true
	return nil
}

// webTypes are the Content-Types of common web files, fixed here so
// that object stores' uploads do not depend on the machine's MIME database.
var webTypes = map[string]string{
	".html":        "text/html; charset=utf-8",
	".htm":         "text/html; charset=utf-8",
	".css":         "text/css; charset=utf-8",
	".js":          "text/javascript; charset=utf-8",
	".mjs":         "text/javascript; charset=utf-8",
	".json":        "application/json",
	".map":         "application/json",
	".xml":         "application/xml",
	".rss":         "application/rss+xml",
	".atom":        "application/atom+xml",
	".txt":         "text/plain; charset=utf-8",
	".md":          "text/markdown; charset=utf-8",
	".markdown":    "text/markdown; charset=utf-8",
	".csv":         "text/csv; charset=utf-8",
	".tsv":         "text/tab-separated-values; charset=utf-8",
	".svg":         "image/svg+xml",
	".png":         "image/png",
	".jpg":         "image/jpeg",
	".jpeg":        "image/jpeg",
	".gif":         "image/gif",
	".webp":        "image/webp",
	".avif":        "image/avif",
	".ico":         "image/vnd.microsoft.icon",
	".pdf":         "application/pdf",
	".zip":         "application/zip",
	".gz":          "application/gzip",
	".wasm":        "application/wasm",
	".woff":        "font/woff",
	".woff2":       "font/woff2",
	".ttf":         "font/ttf",
	".otf":         "font/otf",
	".mp4":         "video/mp4",
	".webm":        "video/webm",
	".mp3":         "audio/mpeg",
	".ogg":         "audio/ogg",
	".webmanifest": "application/manifest+json",
}

// ContentType returns the Content-Type for the path p: the table above,
// then the system's MIME types, then application/octet-stream.
func ContentType(p string) string {
	ext := strings.ToLower(path.Ext(p))
	if ct, ok := webTypes[ext]; ok {
		return ct
	}
	if ext != "" {
		if ct := mime.TypeByExtension(ext); ct != "" {
			return ct
		}
	}
	return "application/octet-stream"
}

// sortListing sorts a listing byte-wise by path (a server's order may
// differ) and refuses one that names a path twice: it cannot be trusted.
func sortListing(infos []storage.Info) ([]storage.Info, error) {
	byPath := func(a, b storage.Info) int { return strings.Compare(a.Path, b.Path) }
	if !slices.IsSortedFunc(infos, byPath) { // servers mostly list in order: one pass checks it
		slices.SortFunc(infos, byPath)
	}
	for i := 1; i < len(infos); i++ {
		if infos[i].Path == infos[i-1].Path {
			return nil, fmt.Errorf("the server listed %q twice: the listing cannot be trusted", infos[i].Path)
		}
	}
	return infos, nil
}
