package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// testEnv is the environment the stores read credentials from.
func testEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// fakeS3 starts an in-process gofakes3 server (memory backend) with one
// bucket and returns Options for it.
func fakeS3(t *testing.T) Options {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("bucket"); err != nil {
		t.Fatal(err)
	}
	// Plain HTTP, where minio-go's own upload would send aws-chunked bodies
	// (gofakes3 keeps their Content-Encoding, and does not decode those of
	// multipart parts): the store signs every body's digest instead.
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server())
	t.Cleanup(srv.Close)
	return Options{
		Bucket: "bucket", Region: "us-east-1", Endpoint: srv.URL, PathStyle: true, Transport: srv.Client().Transport,
		Getenv: testEnv(map[string]string{"AWS_ACCESS_KEY_ID": "fake-id", "AWS_SECRET_ACCESS_KEY": "fake-secret"}),
	}
}

// versityOptions describes the versitygw server of scripts/test-servers, or
// skips (fails under CI) when it is not running.
func versityOptions(t *testing.T) Options {
	t.Helper()
	env := storagetest.ServerEnv(t, "S3", "DISTRIBUTOR_TEST_S3_ENDPOINT", "DISTRIBUTOR_TEST_S3_BUCKET",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
	return Options{
		Bucket: env[1], Region: os.Getenv("DISTRIBUTOR_TEST_S3_REGION"), Endpoint: env[0], PathStyle: true,
		Getenv: testEnv(map[string]string{"AWS_ACCESS_KEY_ID": env[2], "AWS_SECRET_ACCESS_KEY": env[3]}),
	}
}

// weedOptions describes the SeaweedFS S3 gateway of scripts/test-servers,
// or skips (fails under CI) when it is not running.
func weedOptions(t *testing.T) Options {
	t.Helper()
	env := storagetest.ServerEnv(t, "SeaweedFS S3", "DISTRIBUTOR_TEST_WEED_ENDPOINT", "DISTRIBUTOR_TEST_WEED_BUCKET",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
	return Options{
		Bucket: env[1], Region: os.Getenv("DISTRIBUTOR_TEST_WEED_REGION"), Endpoint: env[0], PathStyle: true,
		Getenv: testEnv(map[string]string{"AWS_ACCESS_KEY_ID": env[2], "AWS_SECRET_ACCESS_KEY": env[3]}),
	}
}

// uniquePrefix gives each test its own root in a shared bucket, removed
// when the test ends.
func uniquePrefix(t *testing.T, opts Options) Options {
	t.Helper()
	opts.Prefix = "test/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + rand.Text()[:8]
	t.Cleanup(func() {
		s, err := New(context.Background(), opts)
		if err != nil {
			return
		}
		var keys []string
		s.List(context.Background(), "", func(i storage.Info) error {
			keys = append(keys, i.Path)
			return nil
		})
		for _, k := range keys {
			s.Delete(context.Background(), k)
		}
	})
	return opts
}

func open(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// servers runs fn against gofakes3, versitygw and SeaweedFS.
func servers(t *testing.T, fn func(t *testing.T, opts Options)) {
	t.Run("gofakes3", func(t *testing.T) { fn(t, uniquePrefix(t, fakeS3(t))) })
	t.Run("versitygw", func(t *testing.T) { fn(t, uniquePrefix(t, versityOptions(t))) })
	t.Run("seaweedfs", func(t *testing.T) { fn(t, uniquePrefix(t, weedOptions(t))) })
}

func TestConformance(t *testing.T) {
	plant := storagetest.WithPlantTemp(plantTemp)
	t.Run("gofakes3", func(t *testing.T) {
		opts := fakeS3(t)
		storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, uniquePrefix(t, opts)) }, plant)
	})
	t.Run("gofakes3-bucket-root", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, fakeS3(t)) }, plant)
	})
	t.Run("versitygw", func(t *testing.T) {
		opts := versityOptions(t)
		storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, uniquePrefix(t, opts)) }, plant)
	})
	t.Run("seaweedfs", func(t *testing.T) {
		opts := weedOptions(t)
		storagetest.Run(t, func(t *testing.T) storage.Store { return open(t, uniquePrefix(t, opts)) }, plant)
	})
}

// plantTemp starts a multipart upload, as a process that died while
// uploading a large object leaves it, of a key in the directory dir of the
// store s.
func plantTemp(t *testing.T, s storage.Store, dir string) string {
	t.Helper()
	st := s.(*Store)
	rel := path.Join(dir, "upload-"+rand.Text()[:8])
	core := minio.Core{Client: st.client}
	if _, err := core.NewMultipartUpload(t.Context(), st.bucket, st.Key(rel), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.client.RemoveIncompleteUpload(context.Background(), st.bucket, st.Key(rel)) })
	return rel
}

func put(t testing.TB, s storage.Store, p, data string) {
	t.Helper()
	if _, err := s.Put(t.Context(), p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
}

func TestString(t *testing.T) {
	opts := fakeS3(t)
	opts.Getenv = testEnv(map[string]string{"AWS_ACCESS_KEY_ID": "id-XYZ", "AWS_SECRET_ACCESS_KEY": "very-secret-value"})
	for prefix, want := range map[string]string{"": "s3://bucket", "a/b": "s3://bucket/a/b", "a/b/": "s3://bucket/a/b"} {
		opts.Prefix = prefix
		s := open(t, opts)
		if s.String() != want {
			t.Errorf("String() = %q, want %q", s.String(), want)
		}
		_, err := s.Stat(t.Context(), "dir/missing")
		if err == nil || !strings.Contains(err.Error(), want+": stat dir/missing: ") || !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("error %v does not name the store, operation and path, or is not ErrNotExist", err)
		}
		if strings.Contains(err.Error(), "very-secret-value") || strings.Contains(err.Error(), "id-XYZ") {
			t.Errorf("error %q shows credentials", err)
		}
	}
}

func TestOptionsChecked(t *testing.T) {
	good := fakeS3(t)
	for name, edit := range map[string]func(*Options){
		"no bucket":          func(o *Options) { o.Bucket = "" },
		"missing bucket":     func(o *Options) { o.Bucket = "nope" },
		"unclean prefix":     func(o *Options) { o.Prefix = "a//b" },
		"absolute prefix":    func(o *Options) { o.Prefix = "/a" },
		"endpoint with path": func(o *Options) { o.Endpoint += "/path" },
		"ftp endpoint":       func(o *Options) { o.Endpoint = "ftp://127.0.0.1:1" },
	} {
		t.Run(name, func(t *testing.T) {
			opts := good
			edit(&opts)
			if s, err := New(t.Context(), opts); err == nil {
				s.Close()
				t.Error("New succeeded")
			}
		})
	}
}

func TestPrefixIsolation(t *testing.T) {
	opts := fakeS3(t)
	opts.Prefix = "root"
	s := open(t, opts)
	other := opts
	other.Prefix = "root-sibling"
	s2 := open(t, other)
	put(t, s, "a", "in root")
	put(t, s2, "a", "in sibling")
	whole := opts
	whole.Prefix = ""
	var keys []string
	open(t, whole).List(t.Context(), "", func(i storage.Info) error {
		keys = append(keys, i.Path)
		return nil
	})
	if want := []string{"root-sibling/a", "root/a"}; !slices.Equal(keys, want) {
		t.Errorf("bucket keys = %q, want %q", keys, want)
	}
	var got []string
	s.List(t.Context(), "", func(i storage.Info) error {
		got = append(got, i.Path)
		return nil
	})
	if !slices.Equal(got, []string{"a"}) {
		t.Errorf("List = %q", got)
	}
}

func TestContentType(t *testing.T) {
	for p, want := range map[string]string{
		"index.html":      "text/html; charset=utf-8",
		"a/B.HTM":         "text/html; charset=utf-8",
		"style.css":       "text/css; charset=utf-8",
		"data.json":       "application/json",
		"img.png":         "image/png",
		"noext":           "application/octet-stream",
		"x.unknown-thing": "application/octet-stream",
	} {
		if got := objstore.ContentType(p); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", p, got, want)
		}
	}
	servers(t, func(t *testing.T, opts Options) {
		s := open(t, opts)
		put(t, s, "dir/index.html", "<p>hi</p>")
		info, err := s.client.StatObject(t.Context(), opts.Bucket, s.Key("dir/index.html"), minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if info.ContentType != "text/html; charset=utf-8" {
			t.Errorf("stored Content-Type %q", info.ContentType)
		}
	})
}

func TestVersionIsETag(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		s := open(t, opts)
		v, err := storage.PutIf(t.Context(), s, "x", []byte("hello"), "")
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.client.StatObject(t.Context(), opts.Bucket, s.Key("x"), minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if string(v) != info.ETag || v == "" {
			t.Errorf("version %q, ETag %q", v, info.ETag)
		}
	})
}

// failAfter yields n bytes of data, then fails.
type failAfter struct {
	n int
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("boom")
	}
	k := min(len(p), f.n)
	clear(p[:k])
	f.n -= k
	return k, nil
}

// TestFailedMultipartUploadIsAborted: an object larger than the part size
// (minio-go's, 16 MiB) goes up in parts; a reader failing half-way leaves
// no object and no incomplete upload.
func TestFailedMultipartUploadIsAborted(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		s := open(t, opts)
		ctx := t.Context()
		put(t, s, "big", "old")
		if _, err := s.Put(ctx, "big", &failAfter{n: 19 << 20}, 24<<20, storage.PutOptions{}); err == nil {
			t.Fatal("Put with a failing reader succeeded")
		}
		if data, _, err := s.Get(ctx, "big"); err != nil || string(data) != "old" {
			t.Errorf("after the failed Put: %q, %v", data, err)
		}
		for u := range s.client.ListIncompleteUploads(ctx, opts.Bucket, s.Key(""), true) {
			if u.Err != nil {
				t.Fatalf("ListIncompleteUploads: %v", u.Err)
			}
			t.Errorf("incomplete upload left: %s %s", u.Key, u.UploadID)
		}
		// A multipart upload that completes is one object.
		data := bytes.Repeat([]byte("0123456789abcdef"), (17<<20)/16)
		if _, err := s.Put(ctx, "big", struct{ io.Reader }{bytes.NewReader(data)}, int64(len(data)), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, _, err := s.Get(ctx, "big"); err != nil || !bytes.Equal(got, data) {
			t.Errorf("Get after a multipart Put: %d bytes, %v", len(got), err)
		}
	})
}

func TestClose(t *testing.T) {
	s := open(t, fakeS3(t))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(t.Context(), "x"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Stat after Close: %v", err)
	}
}

func TestBadCredentials(t *testing.T) {
	opts := versityOptions(t)
	opts.Getenv = testEnv(map[string]string{"AWS_ACCESS_KEY_ID": "wrong", "AWS_SECRET_ACCESS_KEY": "wrong-secret"})
	_, err := New(t.Context(), opts)
	if err == nil || !strings.Contains(err.Error(), "credentials") {
		t.Errorf("New with wrong credentials: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("error %q shows the secret", err)
	}
}

func TestCredentialChain(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/credentials"
	if err := os.WriteFile(file, []byte("[default]\naws_access_key_id = file-id\naws_secret_access_key = file-secret\n"+
		"[other]\naws_access_key_id = other-id\naws_secret_access_key = other-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		env    map[string]string
		wantID string
	}{
		"env":              {map[string]string{"AWS_ACCESS_KEY_ID": "env-id", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SHARED_CREDENTIALS_FILE": file}, "env-id"},
		"file":             {map[string]string{"AWS_SHARED_CREDENTIALS_FILE": file}, "file-id"},
		"file profile":     {map[string]string{"AWS_SHARED_CREDENTIALS_FILE": file, "AWS_PROFILE": "other"}, "other-id"},
		"home":             {map[string]string{"HOME": dir + "/home"}, "home-id"},
		"env beats a file": {map[string]string{"AWS_ACCESS_KEY": "legacy-id", "AWS_SECRET_KEY": "s", "HOME": dir + "/home"}, "legacy-id"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.MkdirAll(dir+"/home/.aws", 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir+"/home/.aws/credentials", []byte("[default]\naws_access_key_id = home-id\naws_secret_access_key = x\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			v, err := newCredentials(testEnv(tc.env)).GetWithContext(nil)
			if err != nil {
				t.Fatal(err)
			}
			if v.AccessKeyID != tc.wantID {
				t.Errorf("access key id %q, want %q", v.AccessKeyID, tc.wantID)
			}
		})
	}
}

// TestConditionalHeaders checks what goes over the wire for PutIf.
func TestConditionalHeaders(t *testing.T) {
	var seen []http.Header
	opts := fakeS3(t)
	tr := opts.Transport
	opts.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPut {
			seen = append(seen, r.Header.Clone())
		}
		return tr.RoundTrip(r)
	})
	s := open(t, opts)
	v, err := storage.PutIf(t.Context(), s, "lock", []byte("x"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.PutIf(t.Context(), s, "lock", []byte("y"), v); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Get("If-None-Match") != "*" || seen[1].Get("If-Match") != `"`+string(v)+`"` {
		t.Errorf("conditional headers: %v", seen)
	}
	// A small body goes out with its headers: no wait for "100 Continue".
	for _, h := range seen {
		if h.Get("Expect") != "" {
			t.Errorf("a small conditional PUT sent Expect: %q", h.Get("Expect"))
		}
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestSweepTemp(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		s := open(t, opts)
		ctx := t.Context()
		core := minio.Core{Client: s.client}
		for _, p := range []string{"a/big", "b", "a/big"} {
			if _, err := core.NewMultipartUpload(ctx, opts.Bucket, s.Key(p), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// Another root's upload is not touched.
		other := opts.Prefix + "-other/x"
		if _, err := core.NewMultipartUpload(ctx, opts.Bucket, other, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.client.RemoveIncompleteUpload(context.Background(), opts.Bucket, other) })
		want := []string{"a/big", "a/big", "b"} // one entry per upload
		if found, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true}); !slices.Equal(found, want) || err != nil {
			t.Fatalf("SweepTemp(DryRun) = %q, %v; want %q", found, err, want)
		}
		if found, err := s.SweepTemp(ctx, storage.SweepOptions{Dirs: []string{"a"}, DryRun: true}); !slices.Equal(found, want[:2]) || err != nil {
			t.Fatalf("SweepTemp(a, DryRun) = %q, %v; want %q", found, err, want[:2])
		}
		if found, err := s.SweepTemp(ctx, storage.SweepOptions{}); !slices.Equal(found, want) || err != nil {
			t.Fatalf("SweepTemp = %q, %v; want %q", found, err, want)
		}
		for u := range s.client.ListIncompleteUploads(ctx, opts.Bucket, s.Key(""), true) {
			t.Errorf("left: %s %v", u.Key, u.Err)
		}
		if found, err := s.SweepTemp(ctx, storage.SweepOptions{}); len(found) != 0 || err != nil {
			t.Errorf("second SweepTemp = %q, %v", found, err)
		}
		var others int
		for u := range s.client.ListIncompleteUploads(ctx, opts.Bucket, other, true) {
			if u.Err == nil {
				others++
			}
		}
		if others != 1 {
			t.Errorf("the other root's upload: %d left, want 1", others)
		}
	})
}

// TestPutIfStreamOnePut: a 20 MB PutIfStream, larger than the part size,
// is one conditional PUT (no multipart upload), asking the server to
// check the condition before the body goes out, and the server enforces
// the condition on it: a stale Version, or a create over an object, fails
// with ErrPrecondition and leaves the object alone.
func TestPutIfStreamOnePut(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		var (
			mu   sync.Mutex
			puts []*http.Request
		)
		var inner http.RoundTripper
		if tr, ok := opts.Transport.(*http.Transport); ok {
			inner = tr.Clone()
		} else {
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.ExpectContinueTimeout = time.Second
			inner = tr
		}
		opts.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPut || r.Method == http.MethodPost {
				mu.Lock()
				puts = append(puts, r)
				mu.Unlock()
			}
			return inner.RoundTrip(r)
		})
		s := open(t, opts)
		ctx := t.Context()
		sent := func(what string, header string, want string) {
			t.Helper()
			mu.Lock()
			defer mu.Unlock()
			if len(puts) != 1 {
				t.Fatalf("%s: %d PUT/POST requests, want 1", what, len(puts))
			}
			r := puts[0]
			if r.Method != http.MethodPut || r.URL.Query().Has("uploads") || r.URL.Query().Has("uploadId") || r.URL.Query().Has("partNumber") {
				t.Errorf("%s: %s %s: not a single PUT of the object", what, r.Method, r.URL)
			}
			if got := r.Header.Get(header); got != want {
				t.Errorf("%s: %s: %q, want %q", what, header, got, want)
			}
			if got := r.Header.Get("Expect"); got != "100-continue" {
				t.Errorf("%s: Expect: %q, want 100-continue", what, got)
			}
			puts = nil
		}
		const size = 20 << 20
		one, two, three := bytes.Repeat([]byte{1}, size), bytes.Repeat([]byte{2}, size), bytes.Repeat([]byte{3}, size)
		put := func(data []byte, ifVersion storage.Version) (storage.Version, error) {
			return s.Put(ctx, "catalog.json", struct{ io.ReadSeeker }{bytes.NewReader(data)}, size, storage.IfVersion(ifVersion))
		}
		v1, err := put(one, "")
		if err != nil {
			t.Fatal(err)
		}
		sent("create", "If-None-Match", "*")
		v2, err := put(two, v1)
		if err != nil {
			t.Fatal(err)
		}
		sent("compare-and-swap", "If-Match", `"`+string(v1)+`"`)
		if _, err := put(three, v1); !errors.Is(err, storage.ErrPrecondition) {
			t.Fatalf("stale Version: %v, want ErrPrecondition", err)
		}
		sent("stale compare-and-swap", "If-Match", `"`+string(v1)+`"`)
		if _, err := put(three, ""); !errors.Is(err, storage.ErrPrecondition) {
			t.Fatalf("create over an object: %v, want ErrPrecondition", err)
		}
		sent("create over an object", "If-None-Match", "*")
		var got []byte
		v, err := s.ReadVersioned(ctx, "catalog.json", func(r io.Reader) (err error) {
			got, err = io.ReadAll(r)
			return err
		})
		if err != nil || v != v2 || !bytes.Equal(got, two) {
			t.Errorf("after the refused writes: %d bytes (the second write's: %v), version %q (want %q), %v",
				len(got), bytes.Equal(got, two), v, v2, err)
		}
	})
}

// TestPutIfStreamLimit: PutIfStream refuses more than 5 GiB, without a
// request.
func TestPutIfStreamLimit(t *testing.T) {
	s := open(t, fakeS3(t))
	_, err := s.Put(t.Context(), "huge", strings.NewReader(""), MaxPutIfSize+1, storage.IfVersion(""))
	if err == nil || !strings.Contains(err.Error(), "5 GiB") {
		t.Errorf("PutIfStream of 5 GiB + 1 byte: %v", err)
	}
}

// TestConditionalPutCutShort: a conditional PUT whose connection fails
// before the body is sent whole (as versitygw's does when it refuses the
// condition without reading the body) fails with ErrPrecondition when the
// condition does not hold, and with the transient error when it does.
func TestConditionalPutCutShort(t *testing.T) {
	opts := fakeS3(t)
	tr := opts.Transport
	var cut atomic.Bool
	opts.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPut && cut.Load() {
			io.CopyN(io.Discard, r.Body, 10)
			r.Body.Close()
			return nil, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ECONNRESET)}
		}
		return tr.RoundTrip(r)
	})
	opts.MaxAttempts = 1
	s := open(t, opts)
	ctx := t.Context()
	data := bytes.Repeat([]byte("x"), 1<<20)
	v1, err := storage.PutIf(ctx, s, "c", []byte("one"), "")
	if err != nil {
		t.Fatal(err)
	}
	v2, err := storage.PutIf(ctx, s, "c", []byte("two"), v1)
	if err != nil {
		t.Fatal(err)
	}
	cut.Store(true)
	for _, tc := range []struct {
		p         string
		ifVersion storage.Version
		precond   bool
	}{
		{"c", v1, true},       // stale
		{"c", "", true},       // create over an object
		{"absent", v1, true},  // a version of an absent object
		{"c", v2, false},      // the condition holds: a network failure
		{"absent", "", false}, // likewise
	} {
		_, err := s.Put(ctx, tc.p, bytes.NewReader(data), int64(len(data)), storage.IfVersion(tc.ifVersion))
		if err == nil || errors.Is(err, storage.ErrPrecondition) != tc.precond || !errors.Is(err, syscall.ECONNRESET) && !tc.precond {
			t.Errorf("PutIfStream(%s, %q) cut short: %v; want ErrPrecondition: %v", tc.p, tc.ifVersion, err, tc.precond)
		}
	}
	cut.Store(false)
	if data, v, err := s.Get(ctx, "c"); string(data) != "two" || v != v2 || err != nil {
		t.Errorf("Get = %q, %q, %v", data, v, err)
	}
}

// TestListPage: one bounded page of the keys with a prefix, with their
// Versions (ETags), and whether it is all of them.
func TestListPage(t *testing.T) {
	s := open(t, fakeS3(t))
	for _, p := range []string{"a", "a/b", "a/b/c", "ab", "x"} {
		put(t, s, p, "data of "+p)
	}
	paths := func(infos []storage.Info) []string {
		var out []string
		for _, i := range infos {
			out = append(out, i.Path)
			if i.Version == "" {
				t.Errorf("%s: no Version", i.Path)
			}
		}
		return out
	}
	for _, tc := range []struct {
		prefix   string
		max      int
		want     []string
		complete bool
	}{
		{"a", 10, []string{"a", "a/b", "a/b/c", "ab"}, true},
		{"a/b", 3, []string{"a/b", "a/b/c"}, true},
		{"a", 2, []string{"a", "a/b"}, false},
		{"nothing", 5, nil, true},
	} {
		infos, complete, err := s.ListPage(t.Context(), tc.prefix, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		if got := paths(infos); !slices.Equal(got, tc.want) || complete != tc.complete {
			t.Errorf("ListPage(%q, %d) = %q complete %v, want %q complete %v", tc.prefix, tc.max, got, complete, tc.want, tc.complete)
		}
	}
	if _, _, err := s.ListPage(t.Context(), "../x", 5); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("ListPage of an invalid prefix: %v", err)
	}
	if info, err := s.Stat(t.Context(), "a"); err != nil || info.Version == "" {
		t.Errorf("Stat: %+v %v, want a Version", info, err)
	}
}
