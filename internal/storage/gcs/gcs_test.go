package gcs_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/gcs"
	"github.com/distributor-dev/distributor/internal/storage/gcs/gcstest"
	"github.com/distributor-dev/distributor/internal/storage/probe"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/probetest"
	"github.com/distributor-dev/distributor/internal/txn"
)

func put(t testing.TB, s storage.Store, p, data string, opts ...storage.PutOptions) {
	t.Helper()
	var o storage.PutOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if _, err := s.Put(t.Context(), p, strings.NewReader(data), int64(len(data)), o); err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
}

func TestConformance(t *testing.T) {
	srv := gcstest.FakeGCS(t)
	t.Run("prefix", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return srv.Open(t, gcstest.Prefix(t)) })
	})
	t.Run("bucket-root", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return srv.NewBucket(t).Open(t, "") })
	})
}

// resource reads the object resource of name in the bucket of srv with a
// plain HTTP client, independently of the adapter.
func resource(t *testing.T, srv *gcstest.Server, name string) map[string]any {
	t.Helper()
	resp, err := http.Get(srv.Endpoint + "b/" + srv.Bucket + "/o/" + url.PathEscape(name))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", name, resp.Status, err)
	}
	return m
}

// TestMetadata: PutOptions.Metadata lands in the object's metadata, as an
// independent client reads it, and without it the Content-Type follows
// the extension.
func TestMetadata(t *testing.T) {
	srv := gcstest.FakeGCS(t)
	prefix := gcstest.Prefix(t)
	s := srv.Open(t, prefix)
	md := storage.Metadata{CacheControl: "public, max-age=60", ContentType: "text/csv; charset=utf-8", ContentDisposition: "attachment"}
	put(t, s, "data.csv", "a,b\n", storage.PutOptions{Metadata: md})
	if _, err := s.Put(t.Context(), "new.csv", strings.NewReader("x"), 1, storage.PutOptions{Mode: storage.PutCreate, Metadata: md}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "page.html", "<p>")
	for name, want := range map[string]map[string]string{
		"data.csv":  {"cacheControl": md.CacheControl, "contentType": md.ContentType, "contentDisposition": md.ContentDisposition},
		"new.csv":   {"cacheControl": md.CacheControl, "contentType": md.ContentType, "contentDisposition": md.ContentDisposition},
		"page.html": {"contentType": "text/html; charset=utf-8"},
	} {
		got := resource(t, srv, prefix+"/"+name)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %q", name, k, got[k], v)
			}
		}
	}
}

// TestVersionIsGeneration: a Version is the object's generation, the same
// from PutIf, Get, Stat and List, and what an independent client sees.
func TestVersionIsGeneration(t *testing.T) {
	srv := gcstest.FakeGCS(t)
	prefix := gcstest.Prefix(t)
	s := srv.Open(t, prefix)
	v, err := storage.PutIf(t.Context(), s, "x", []byte("one"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := resource(t, srv, prefix+"/x")["generation"]; got != string(v) {
		t.Fatalf("PutIf returned %q, the object's generation is %v", v, got)
	}
	_, gv, err := s.Get(t.Context(), "x")
	if err != nil || gv != v {
		t.Fatalf("Get: version %q, %v; want %q", gv, err, v)
	}
	if info, err := s.Stat(t.Context(), "x"); err != nil || info.Version != v || info.Size != 3 {
		t.Fatalf("Stat: %+v, %v; want version %q, size 3", info, err, v)
	}
	infos, complete, err := s.ListPage(t.Context(), "", 10)
	if err != nil || !complete || len(infos) != 1 || infos[0].Version != v {
		t.Fatalf("ListPage: %+v, %v, %v", infos, complete, err)
	}
	v2, err := storage.PutIf(t.Context(), s, "x", []byte("two"), v)
	if err != nil || v2 == v {
		t.Fatalf("PutIf on the generation: %q, %v", v2, err)
	}
	if _, err := storage.PutIf(t.Context(), s, "x", []byte("three"), v); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutIf on the old generation: %v, want ErrPrecondition", err)
	}
	if _, err := storage.PutIf(t.Context(), s, "x", []byte("three"), "\"not-a-generation\""); !errors.Is(err, storage.ErrPrecondition) {
		t.Fatalf("PutIf on a version that is no generation: %v, want ErrPrecondition", err)
	}
}

func TestListPage(t *testing.T) {
	s := gcstest.FakeGCS(t).Open(t, gcstest.Prefix(t))
	for _, p := range []string{"a", "b/1", "b/2", "b/3", "c"} {
		put(t, s, p, p)
	}
	infos, complete, err := s.ListPage(t.Context(), "b/", 2)
	if err != nil || complete || len(infos) != 2 || infos[0].Path != "b/1" || infos[1].Path != "b/2" {
		t.Fatalf("ListPage(b/, 2) = %+v, %v, %v; want b/1 b/2, incomplete", infos, complete, err)
	}
	infos, complete, err = s.ListPage(t.Context(), "b/", 3)
	if err != nil || !complete || len(infos) != 3 {
		t.Fatalf("ListPage(b/, 3) = %+v, %v, %v; want 3, complete", infos, complete, err)
	}
}

func TestStringAndErrors(t *testing.T) {
	srv := gcstest.FakeGCS(t)
	for prefix, want := range map[string]string{"": "gs://" + srv.Bucket, "a/b": "gs://" + srv.Bucket + "/a/b"} {
		s := srv.Open(t, prefix)
		if s.String() != want {
			t.Errorf("String() = %q, want %q", s.String(), want)
		}
		_, err := s.Stat(t.Context(), "dir/missing")
		if err == nil || !strings.Contains(err.Error(), want+": stat dir/missing: ") || !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("error %v does not name the store, operation and path, or is not ErrNotExist", err)
		}
	}
}

func TestOptionsChecked(t *testing.T) {
	srv := gcstest.FakeGCS(t)
	for name, edit := range map[string]func(*gcs.Options){
		"no bucket":           func(o *gcs.Options) { o.Bucket = "" },
		"missing bucket":      func(o *gcs.Options) { o.Bucket = "nope-" + strings.ToLower(t.Name()) },
		"unclean prefix":      func(o *gcs.Options) { o.Prefix = "a//b" },
		"absolute prefix":     func(o *gcs.Options) { o.Prefix = "/a" },
		"endpoint with query": func(o *gcs.Options) { o.Endpoint += "?x=1" },
		"ftp endpoint":        func(o *gcs.Options) { o.Endpoint = "ftp://127.0.0.1:1/" },
	} {
		t.Run(name, func(t *testing.T) {
			opts := srv.Options("")
			edit(&opts)
			if s, err := gcs.New(t.Context(), opts); err == nil {
				s.Close()
				t.Error("New succeeded")
			}
		})
	}
}

// TestEmulatorHost: with STORAGE_EMULATOR_HOST (host:port, as Google's
// libraries read it) and no endpoint, the store talks to the emulator,
// without credentials, even though Anonymous is not set.
func TestEmulatorHost(t *testing.T) {
	srv := gcstest.FakeGCS(t)
	u, _ := url.Parse(srv.Endpoint)
	opts := srv.Options(gcstest.Prefix(t))
	opts.Endpoint, opts.Anonymous = "", false
	opts.Getenv = func(k string) string {
		return map[string]string{"STORAGE_EMULATOR_HOST": u.Host, "GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent.json"}[k]
	}
	s := gcstest.Open(t, opts)
	put(t, s, "x", "x")
	if data, _, err := s.Get(t.Context(), "x"); err != nil || string(data) != "x" {
		t.Fatalf("Get: %q, %v", data, err)
	}
}

// TestProofRefusesIgnoredConditions: behind a gateway that drops
// ifGenerationMatch (every one, or only those naming a generation), the
// up-front proof (spec section 6) refuses the server, naming what it does
// not enforce, and leaves nothing behind; straight to fake-gcs-server it
// passes.
func TestProofRefusesIgnoredConditions(t *testing.T) {
	srv := gcstest.FakeGCS(t)
	if err := probetest.Exclusion(t.Context(), srv.Open(t, gcstest.Prefix(t))); err != nil {
		t.Fatalf("proof on fake-gcs-server: %v", err)
	}
	for _, tc := range []struct {
		name string
		drop func(string) bool
		want string
	}{
		{"all", func(string) bool { return true }, probe.ExclusiveCreate},
		{"generations", func(v string) bool { return v != "0" }, probe.CompareAndSwap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := gcstest.Prefix(t)
			st := srv.DropConditions(t, tc.drop).Open(t, prefix)
			err := probetest.Exclusion(t.Context(), st)
			var ue *probe.UnenforcedError
			if !errors.As(err, &ue) || ue.Capability != tc.want {
				t.Fatalf("proof behind the gateway: %v; want an UnenforcedError for %q", err, tc.want)
			}
			// A writer proves the same on its lock, and gives up before
			// it writes anything: the root is empty again.
			_, err = txn.Begin(t.Context(), txn.Options{Store: st, Command: "run", Lock: lock.Locker{NoWait: true}})
			if !errors.As(err, &ue) {
				t.Fatalf("txn.Begin behind the gateway: %v; want an UnenforcedError", err)
			}
			if left := storagetest.Snapshot(t, srv.Open(t, prefix)); len(left) != 0 {
				t.Fatalf("the refused writer left %v", left)
			}
		})
	}
}

// TestIsTransient classifies the answers of a server and the failures of
// the network.
func TestIsTransient(t *testing.T) {
	srv := gcstest.FakeGCS(t)
	s := srv.Open(t, gcstest.Prefix(t))
	_, missing := s.Stat(t.Context(), "missing")
	_, cond := storage.PutIf(t.Context(), s, "missing", []byte("x"), "123")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, cancelled := s.Stat(ctx, "x")
	closed := gcstest.Open(t, srv.Options(""))
	closed.Close()
	_, closedErr := closed.Stat(t.Context(), "x")
	refusedOpts := srv.Options("")
	refusedOpts.Endpoint = "http://127.0.0.1:1/storage/v1/"
	refusedOpts.SkipCheck = true
	refusedStore, err := gcs.New(t.Context(), refusedOpts)
	if err != nil {
		t.Fatal(err)
	}
	_, refused := refusedStore.Stat(t.Context(), "x")
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"404":     {missing, false},
		"412":     {cond, false},
		"refused": {refused, true},
		"context": {cancelled, false},
		"closed":  {closedErr, false},
		"EOF":     {io.ErrUnexpectedEOF, true},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if got := s.IsTransient(tc.err); got != tc.want {
			t.Errorf("%s: IsTransient(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
	for status, want := range map[int]bool{429: true, 500: true, 503: true, 400: false, 401: false, 403: false, 409: false} {
		st := statusServer(t, status)
		_, err := st.Stat(t.Context(), "x")
		if err == nil || st.IsTransient(err) != want {
			t.Errorf("HTTP %d: IsTransient(%v) = %v, want %v", status, err, !want, want)
		}
	}
}

// TestConcurrentWriters: eight writers that each take the root's lock,
// prove the server's conditions on it and increment a counter with a
// compare-and-swap, three times, lose no increment.
func TestConcurrentWriters(t *testing.T) {
	s := gcstest.FakeGCS(t).Open(t, gcstest.Prefix(t))
	const writers, rounds = 8, 3
	errc := make(chan error, writers)
	for w := range writers {
		go func() {
			l := lock.Locker{Store: s, Wait: time.Minute, Poll: 20 * time.Millisecond, PID: 1000 + w,
				Alive: func(int) bool { return true }}
			for range rounds {
				if err := increment(t.Context(), &l); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for range writers {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	data, _, err := s.Get(t.Context(), "counter")
	if n, _ := strconv.Atoi(string(data)); err != nil || n != writers*rounds {
		t.Fatalf("counter %q, %v; want %d", data, err, writers*rounds)
	}
}

// increment takes the lock of l, proves exclusion on it and adds one to
// the counter object.
func increment(ctx context.Context, l *lock.Locker) error {
	k, err := l.Acquire(ctx, "test")
	if err != nil {
		return err
	}
	defer k.Release(context.WithoutCancel(ctx))
	if err := k.ProveExclusion(ctx, nil); err != nil {
		return err
	}
	data, v, err := l.Store.Get(ctx, "counter")
	if errors.Is(err, storage.ErrNotExist) {
		data, v, err = []byte("0"), "", nil
	}
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(string(data))
	_, err = storage.PutIf(ctx, l.Store, "counter", []byte(strconv.Itoa(n+1)), v)
	return err
}
