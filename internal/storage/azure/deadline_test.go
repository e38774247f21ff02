package azure_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/deadline"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// testTimeout is the tests' dial, response and idle timeout. Azurite (a
// Node.js process) pauses reading a large body now and then for a few
// hundred milliseconds on a loaded machine: a second (times the test-wide
// time factor, like every budget) leaves it time.
var testTimeout = testtime.Scale(time.Second)

// viaProxy returns Options for a fresh root on Azurite reached through a
// faultproxy, with the tests' short deadlines.
func viaProxy(t *testing.T) (azure.Options, *faultproxy.Proxy) {
	t.Helper()
	srv := azuretest.Azurite(t)
	p := faultproxy.New(t, srv.Addr)
	opts := srv.Options(srv.UniquePrefix(t))
	opts.Endpoint = strings.Replace(srv.Endpoint, srv.Addr, p.Addr(), 1)
	opts.DialTimeout, opts.ResponseTimeout, opts.IdleTimeout = testTimeout, testTimeout, testTimeout
	return opts, p
}

// proxiedStores opens a store through a proxy, with its Options adjusted
// by set (if not nil), for the partition tests of storagetest.
func proxiedStores(set func(*azure.Options)) storagetest.PartitionedStores {
	return func(t *testing.T, fn func(t *testing.T, s storage.Store, p storagetest.Partition)) {
		t.Run("azurite", func(t *testing.T) {
			opts, p := viaProxy(t)
			if set != nil {
				set(&opts)
			}
			fn(t, azuretest.OpenWith(t, opts), p)
		})
	}
}

// TestStalledPutFails: a Put whose connection stops carrying bytes
// half-way fails within about the idle timeout, stores nothing, and the
// store works again once the network heals; as one Put Blob and in
// blocks.
func TestStalledPutFails(t *testing.T) {
	t.Run("put-blob", func(t *testing.T) { storagetest.StalledPut(t, proxiedStores(nil), 8<<20) })
	t.Run("blocks", func(t *testing.T) {
		storagetest.StalledPut(t, proxiedStores(func(o *azure.Options) { o.BlockSize = 2 << 20 }), 8<<20)
	})
}

// TestStalledReadsFail: Get and Stat whose server stops answering, and a
// streaming read stalled half-way, fail within the bound (the SDK's
// retries included), and the store works again after the heal.
func TestStalledReadsFail(t *testing.T) {
	const size = 32 << 20 // more than the socket buffers
	// The setup goes up in blocks, each retried by the SDK.
	storagetest.StalledReads(t, proxiedStores(func(o *azure.Options) { o.BlockSize = 4 << 20 }), size)
}

// TestRefusedFailsFast: a server that refuses connections fails a call
// after at most MaxAttempts connection attempts, within about a second of
// backoff; once it accepts again the same store works.
func TestRefusedFailsFast(t *testing.T) {
	opts, p := viaProxy(t)
	s := azuretest.OpenWith(t, opts)
	put(t, s, "x", "x")
	p.Refuse(true)
	p.Cut()
	before := p.Accepted()
	if err := storagetest.Bounded(t, "Stat", func() error { _, err := s.Stat(context.Background(), "x"); return err }); err == nil ||
		!s.IsTransient(err) {
		t.Fatalf("Stat through a refusing proxy: %v, want a transient failure", err)
	}
	if n := p.Accepted() - before; n > 3+1 {
		t.Errorf("Stat made %d connection attempts, want at most 4", n)
	}
	p.Refuse(false)
	if data, _, err := s.Get(t.Context(), "x"); err != nil || string(data) != "x" {
		t.Fatalf("Get once the server accepts again: %q, %v", data, err)
	}
}

// TestIdleTimeoutNamed: a download whose bytes stop coming fails with the
// progress deadline's error, which is transient.
func TestIdleTimeoutNamed(t *testing.T) {
	opts, p := viaProxy(t)
	direct := opts
	direct.Endpoint = strings.Replace(opts.Endpoint, p.Addr(), azuretest.Azurite(t).Addr, 1)
	direct.IdleTimeout, direct.ResponseTimeout = 0, 0
	put(t, azuretest.OpenWith(t, direct), "big", strings.Repeat("x", 16<<20))
	opts.MaxAttempts = 1
	s := azuretest.OpenWith(t, opts)
	rc, err := s.Open(t.Context(), "big")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := rc.Read(make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	defer p.Heal()
	err = storagetest.Bounded(t, "read", func() error {
		_, err := rc.Read(make([]byte, 32<<20))
		for err == nil {
			_, err = rc.Read(make([]byte, 32<<20))
		}
		return err
	})
	var se *deadline.StallError
	if !errors.As(err, &se) || !s.IsTransient(err) {
		t.Errorf("stalled read: %v, want a transient *deadline.StallError", err)
	}
}

// TestResponseTimeout: a server that takes the request and never answers
// fails the call after ResponseTimeout per attempt.
func TestResponseTimeout(t *testing.T) {
	srv := azuretest.Azurite(t)
	opts := srv.Options(srv.UniquePrefix(t))
	opts.Endpoint = gateway(t, srv, func(_ http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/silent") {
			<-r.Context().Done()
			return true
		}
		return false
	})
	opts.ResponseTimeout, opts.IdleTimeout, opts.MaxAttempts = 200*time.Millisecond, time.Minute, 1
	s := azuretest.OpenWith(t, opts)
	err := storagetest.Bounded(t, "Stat", func() error { _, err := s.Stat(context.Background(), "silent"); return err })
	if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") || !s.IsTransient(err) {
		t.Errorf("Stat of a blob the server never answers: %v; want a transient response header timeout", err)
	}
	put(t, s, "fine", "fine")
}
