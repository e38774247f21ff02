package azure_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/probe"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/txn"
)

// gateway is a reverse proxy on 127.0.0.1 in front of Azurite that hands
// every request to front first, which may change it, or answer it itself
// (it returns true then). It returns the endpoint through the gateway.
func gateway(t *testing.T, srv *azuretest.Server, front func(w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = ""
	rp := httputil.NewSingleHostReverseProxy(target)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !front(w, r) {
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(gw.Close)
	return gw.URL + "/" + srv.Account
}

// sasStore opens a store through the gateway with a SAS: a SAS signs no
// request header, so a gateway that drops the condition headers is
// accepted, as some proxies are.
func sasStore(t *testing.T, srv *azuretest.Server, endpoint string) *azure.Store {
	t.Helper()
	opts := srv.Options(srv.UniquePrefix(t))
	opts.Endpoint = endpoint
	token := srv.SAS(t, srv.Container)
	opts.Getenv = func(k string) string {
		if k == "AZURE_STORAGE_SAS_TOKEN" {
			return token
		}
		return ""
	}
	return azuretest.OpenWith(t, opts)
}

// TestProofRefusesIgnoredConditions: a transaction's up-front proof (on
// the lock object, spec section 6) passes on Azurite, and refuses Azurite
// behind a gateway that drops If-None-Match and If-Match, before anything
// is written: the lock is removed again and the root is empty.
func TestProofRefusesIgnoredConditions(t *testing.T) {
	srv := azuretest.Azurite(t)
	for _, tc := range []struct {
		name  string
		strip bool
	}{{"enforced", false}, {"headers dropped", true}} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint := gateway(t, srv, func(_ http.ResponseWriter, r *http.Request) bool {
				if tc.strip {
					r.Header.Del("If-None-Match")
					r.Header.Del("If-Match")
				}
				return false
			})
			st := sasStore(t, srv, endpoint)
			tx, err := txn.Begin(t.Context(), txn.Options{Store: st, Command: "run", Lock: lock.Locker{NoWait: true}})
			if !tc.strip {
				if err != nil {
					t.Fatalf("Begin on Azurite: %v", err)
				}
				tx.End()
				return
			}
			var ue *probe.UnenforcedError
			if !errors.As(err, &ue) || ue.Capability != probe.ExclusiveCreate {
				t.Fatalf("Begin behind a gateway that drops the conditions: %v, want an UnenforcedError for exclusive create", err)
			}
			var left []string
			st.List(t.Context(), "", func(i storage.Info) error { left = append(left, i.Path); return nil })
			if len(left) != 0 {
				t.Errorf("the refused Begin left %q", left)
			}
		})
	}
}

// TestConditionalWritesSentOnce: a server answering 503 gets each write
// (Put Blob, PutIf, a Put Block List) once, and the error is transient for
// the retry wrapper above to decide on; reads are sent MaxAttempts times.
func TestConditionalWritesSentOnce(t *testing.T) {
	srv := azuretest.Azurite(t)
	var failing atomic.Bool
	var requests atomic.Int64
	opts := srv.Options(srv.UniquePrefix(t))
	opts.Endpoint = gateway(t, srv, func(w http.ResponseWriter, r *http.Request) bool {
		if !failing.Load() {
			return false
		}
		requests.Add(1)
		w.Header().Set("x-ms-error-code", "ServerBusy")
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	s := azuretest.OpenWith(t, opts)
	put(t, s, "x", "x")
	failing.Store(true)
	for _, tc := range []struct {
		name string
		want int64
		call func() error
	}{
		{"PutIf", 1, func() error { _, err := storage.PutIf(t.Context(), s, "lock", []byte("l"), ""); return err }},
		{"PutNew", 1, func() error {
			_, err := s.Put(t.Context(), "n", strReader("n"), 1, storage.PutOptions{Mode: storage.PutCreate})
			return err
		}},
		{"Put", 1, func() error { _, err := s.Put(t.Context(), "p", strReader("p"), 1, storage.PutOptions{}); return err }},
		{"Stat", 3, func() error { _, err := s.Stat(t.Context(), "x"); return err }},
		{"Get", 3, func() error { _, _, err := s.Get(t.Context(), "x"); return err }},
	} {
		requests.Store(0)
		err := storagetest.Bounded(t, tc.name, tc.call)
		if err == nil || !s.IsTransient(err) {
			t.Errorf("%s against 503: %v, want a transient error", tc.name, err)
		}
		if n := requests.Load(); n != tc.want {
			t.Errorf("%s against 503: %d requests, want %d", tc.name, n, tc.want)
		}
	}
}
