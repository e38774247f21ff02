// Package objstore holds what the object-store adapters (S3, Azure Blob,
// GCS) share below the storage.Store contract: the Content-Type of a
// path, a request body of exactly the declared size, and an HTTP
// transport whose connections carry progress deadlines.
package objstore

import (
	"context"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
)

// ExactReader yields exactly the declared number of bytes of a reader and
// fails, without yielding the last bytes, if the reader has fewer or more,
// if it fails, or if the context ends: so a request whose body is cut
// short never reaches its declared length and the server stores nothing.
type ExactReader struct {
	ctx  context.Context
	r    io.Reader
	left int64
	read int64
	err  error
}

// Err is the reader's first failure: the cause to report, whatever the
// HTTP client made of it.
func (e *ExactReader) Err() error { return e.err }

// Left is the number of bytes not yet read.
func (e *ExactReader) Left() int64 { return e.left }

// NewExactReader returns an ExactReader of size bytes of r. For size 0 it
// checks at once that r is empty (nothing will read it), and reports a
// failure as Err.
func NewExactReader(ctx context.Context, r io.Reader, size int64) *ExactReader {
	e := &ExactReader{ctx: ctx, r: r, left: size}
	if size == 0 {
		e.err = e.checkEnd()
	}
	return e
}

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

// checkEnd checks that the reader has no byte left and the context is alive.
func (e *ExactReader) checkEnd() error {
	var extra [1]byte
	n, err := io.ReadFull(e.r, extra[:])
	switch {
	case n > 0:
		return fmt.Errorf("input is longer than %d bytes", e.read)
	case err != io.EOF:
		return fmt.Errorf("after %d bytes: %w", e.read, err)
	}
	return e.ctx.Err()
}

// contentTypes are the Content-Types of common web files, fixed here so
// that uploads do not depend on the machine's MIME database.
var contentTypes = map[string]string{
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
	if ct, ok := contentTypes[ext]; ok {
		return ct
	}
	if ext != "" {
		if ct := mime.TypeByExtension(ext); ct != "" {
			return ct
		}
	}
	return "application/octet-stream"
}
