package s3

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/distributor-dev/distributor/internal/storage"
)

var contentsRE = regexp.MustCompile(`(?s)<Contents>.*?</Contents>`)

// reorderingS3 serves gofakes3 behind a handler that rewrites the
// <Contents> entries of every listing with reorder, as servers that list in
// modification-time order (or list a key twice) do.
func reorderingS3(t *testing.T, reorder func([]string) []string) Options {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("bucket"); err != nil {
		t.Fatal(err)
	}
	inner := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !r.URL.Query().Has("list-type") {
			inner.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		entries := contentsRE.FindAll(body, -1)
		if len(entries) > 0 {
			first := contentsRE.FindIndex(body)
			strs := make([]string, len(entries))
			for i, e := range entries {
				strs[i] = string(e)
			}
			rest := contentsRE.ReplaceAll(body, nil)
			body = slices.Concat(rest[:first[0]], []byte(strings.Join(reorder(strs), "")), rest[first[0]:])
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return Options{
		Bucket: "bucket", Region: "us-east-1", Endpoint: srv.URL, PathStyle: true, Transport: srv.Client().Transport,
		Getenv: testEnv(map[string]string{"AWS_ACCESS_KEY_ID": "fake-id", "AWS_SECRET_ACCESS_KEY": "fake-secret"}),
	}
}

// TestListToleratesServerOrder: a server that lists a complete set of keys
// in another order (rclone serve s3 lists by modification time) is listed
// in byte-wise order all the same; one that lists a key twice is refused.
func TestListToleratesServerOrder(t *testing.T) {
	ctx := context.Background()
	reverse := func(s []string) []string { slices.Reverse(s); return s }
	st, err := New(ctx, reorderingS3(t, reverse))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := []string{"a.txt", "img/logo.png", "index.html", "z/last.txt"}
	for _, p := range []string{"index.html", "img/logo.png", "z/last.txt", "a.txt"} {
		if _, err := st.Put(ctx, p, bytes.NewReader([]byte(p)), int64(len(p)), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := st.List(ctx, "", func(i storage.Info) error { got = append(got, i.Path); return nil }); err != nil {
		t.Fatalf("List of a reversed listing: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("List = %v, want %v", got, want)
	}

	twice := func(s []string) []string { return append(s, s[0]) }
	st2, err := New(ctx, reorderingS3(t, twice))
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if _, err := st2.Put(ctx, "a.txt", bytes.NewReader([]byte("a")), 1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = st2.List(ctx, "", func(storage.Info) error { calls++; return nil })
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("List of a listing with a key twice: %v", err)
	}
}
