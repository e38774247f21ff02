// The conformance of writes that give their digest (PutOptions.SHA256), and
// the Content-Encoding check of the object stores (ContentEncoding).

package storagetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// sha256Of is the PutOptions.SHA256 of data.
func sha256Of(data []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(data)) }

// testDigestCutShort: a write that gives the digest of its bytes, as the
// engine's do, and whose reader fails, yields fewer or more bytes, or whose
// context ends mid-stream, fails and leaves the old object (or none), as
// one without does (FailingReader, SizeMismatch, ContextCancelled): a
// store that streams the body under its digest (S3) must not store what
// arrived of it either.
func testDigestCutShort(t *testing.T, s storage.Store) {
	put(t, s, "old", "old content")
	data := payload(3<<20+17, 1)
	for _, tc := range []struct {
		name string
		r    func(ctx context.Context, cancel context.CancelFunc) io.Reader
		size int
		sum  []byte // what the digest is of
	}{
		{"failing", func(context.Context, context.CancelFunc) io.Reader { return &failingReader{data: data, n: 3} }, 10, data[:10]},
		{"failing multi-chunk", func(context.Context, context.CancelFunc) io.Reader {
			return &failingReader{data: data, n: 2<<20 + 5}
		}, len(data), data},
		{"cancelled mid-stream", func(_ context.Context, cancel context.CancelFunc) io.Reader {
			return &cancelReader{r: bytes.NewReader(data), after: 64 << 10, cancel: cancel}
		}, len(data), data},
		{"short", func(context.Context, context.CancelFunc) io.Reader { return bytes.NewReader(data[:5]) }, 10, data[:10]},
		{"long", func(context.Context, context.CancelFunc) io.Reader { return bytes.NewReader(data[:10]) }, 5, data[:5]},
	} {
		for _, p := range []string{"old", "new"} {
			ctx, cancel := context.WithCancel(t.Context())
			opts := storage.PutOptions{SHA256: sha256Of(tc.sum)}
			if p == "new" {
				opts.Mode = storage.PutCreate
			}
			if _, err := s.Put(ctx, p, tc.r(ctx, cancel), int64(tc.size), opts); err == nil {
				t.Errorf("%s: Put(%q) succeeded", tc.name, p)
			}
			cancel()
		}
	}
	wantContent(t, s, "old", "old content")
	wantMissing(t, s, "new")
	wantList(t, s, "", "old")
}

// Served is what an independent client of an object store (not the
// store's own) reads of the object at the store path p: the
// Content-Encoding of a GET that accepts gzip and decodes nothing, as a
// browser or CDN sends it, and the body as served.
type Served func(t *testing.T, p string) (contentEncoding string, body []byte)

// ContentEncoding checks that the object store s keeps exactly the
// Content-Encoding of its writes' Metadata (spec 3.4): "gzip" where
// Metadata.ContentEncoding says so, none on any other object, whether the
// write gives its digest (PutOptions.SHA256) or not, is small, large
// (more than a multipart upload's 16 MiB part) or a PutIf; and that
// s.Get returns the bytes as stored, never decoded. served reads them
// back independently.
func ContentEncoding(t *testing.T, s storage.Store, served Served) {
	ctx := t.Context()
	plain, big := payload(100<<10, 3), payload(17<<20, 4)
	page, large := gzipped(t, plain[:40<<10]), gzipped(t, big)
	type write struct {
		p, encoding string
		data        []byte
		digest      bool
	}
	writes := []write{
		{"plain.txt", "", plain, true}, {"plain.bin", "", plain, false}, {"empty", "", []byte{}, true},
		{"index.html", "gzip", page, true}, {"style.css", "gzip", page, false}, {"big.json", "gzip", large, true},
		{"big.bin", "", big, false},
	}
	for i, w := range writes {
		opts := storage.PutOptions{Metadata: storage.Metadata{ContentEncoding: w.encoding}}
		if w.digest {
			opts.SHA256 = sha256Of(w.data)
		}
		if i%2 == 0 {
			opts.Mode = storage.PutCreate
		}
		// Hide bytes.Reader's Seeker and WriterTo: the store must stream.
		if _, err := s.Put(ctx, w.p, struct{ io.Reader }{bytes.NewReader(w.data)}, int64(len(w.data)), opts); err != nil {
			t.Fatalf("Put(%q): %v", w.p, err)
		}
	}
	if _, err := storage.PutIf(ctx, s, "lock", []byte(`{"holder":"x"}`), ""); err != nil {
		t.Fatal(err)
	}
	for _, w := range append(writes, write{p: "lock", data: []byte(`{"holder":"x"}`)}) {
		if enc, body := served(t, w.p); enc != w.encoding || !bytes.Equal(body, w.data) {
			t.Errorf("%s served with Content-Encoding %q, %d bytes (as stored: %v); want %q, %d bytes",
				w.p, enc, len(body), bytes.Equal(body, w.data), w.encoding, len(w.data))
		}
		if got, _ := get(t, s, w.p); !bytes.Equal(got, w.data) {
			t.Errorf("Get(%q) = %d bytes, not the %d stored", w.p, len(got), len(w.data))
		}
	}
}

// gzipped returns data gzip-compressed.
func gzipped(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if _, err := zw.Write(data); err != nil || zw.Close() != nil {
		t.Fatal("gzip", err)
	}
	return b.Bytes()
}

// ServedGET is a Served's GET of the URL u, as a browser sends it
// ("Accept-Encoding: gzip", so that Go's transport decodes nothing).
func ServedGET(t *testing.T, u string) (contentEncoding string, body []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", u, resp.Status, err)
	}
	return resp.Header.Get("Content-Encoding"), body
}
