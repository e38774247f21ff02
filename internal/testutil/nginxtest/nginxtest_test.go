package nginxtest_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/distributor-dev/distributor/internal/testutil/nginxtest"
)

// page is a few KB of HTML.
func page(title string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!doctype html>\n<html><head><title>%s</title></head><body>\n", title)
	for i := range 100 {
		fmt.Fprintf(&b, "<p>Row %d of the %s report: %d units.</p>\n", i, title, i*i)
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// withSidecars writes path and its path.gz and path.br.
func withSidecars(t *testing.T, path string, data []byte) {
	t.Helper()
	write(t, path, data)
	var gz, br bytes.Buffer
	zw := gzip.NewWriter(&gz)
	bw := brotli.NewWriter(&br)
	for _, w := range []io.WriteCloser{zw, bw} {
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(t, path+".gz", gz.Bytes())
	write(t, path+".br", br.Bytes())
}

func decode(t *testing.T, body []byte, encoding string) []byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	switch encoding {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatalf("gzip body: %v", err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(r)
	default:
		t.Fatalf("unexpected Content-Encoding %q", encoding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding the %s body: %v", encoding, err)
	}
	return out
}

// TestSidecars proves what the precompressed outputs of spec 3.4 rely on:
// nginx with gzip_static and brotli_static serves P.br or P.gz for P by the
// client's Accept-Encoding, P itself to a client that accepts neither, and
// compresses nothing on the fly.
func TestSidecars(t *testing.T) {
	root := t.TempDir()
	a, plain, index := page("a"), page("plain"), page("index")
	withSidecars(t, filepath.Join(root, "a.html"), a)
	withSidecars(t, filepath.Join(root, "sub", "index.html"), index)
	write(t, filepath.Join(root, "plain.html"), plain)
	url := nginxtest.Start(t, root)

	for _, tc := range []struct {
		path, accept, encoding string
		want                   []byte
	}{
		{"/a.html", "br", "br", a},
		{"/a.html", "gzip", "gzip", a},
		{"/a.html", "", "", a},
		{"/a.html", "br, gzip", "br", a},
		{"/a.html", "gzip, deflate, br, zstd", "br", a}, // what browsers send
		{"/a.html", "identity", "", a},
		{"/sub/", "br", "br", index}, // the index, through its sidecar
		{"/sub/", "gzip", "gzip", index},
		{"/plain.html", "br, gzip", "", plain}, // no sidecar: gzip is off
		{"/plain.html", "gzip", "", plain},
		{"/plain.html", "", "", plain},
	} {
		body, encoding := nginxtest.Get(t, url+tc.path, tc.accept)
		if encoding != tc.encoding {
			t.Errorf("GET %s, Accept-Encoding %q: Content-Encoding %q, want %q", tc.path, tc.accept, encoding, tc.encoding)
			continue
		}
		if got := decode(t, body, encoding); !bytes.Equal(got, tc.want) {
			t.Errorf("GET %s, Accept-Encoding %q: %d bytes decode to %d bytes, not the page's %d", tc.path, tc.accept, len(body), len(got), len(tc.want))
		}
	}
}
