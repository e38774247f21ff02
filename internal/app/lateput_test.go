package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/gcs/gcstest"
)

// holdProxy is an HTTP gateway on 127.0.0.1 in front of an object store
// emulator that holds back one upload, as a server that got a request's
// last byte and has not applied it yet: once armed, it reads the first
// write of the object held whole, closes got, and forwards it when release
// returns, whatever became of the client meanwhile (a client gone stays
// gone: the server applies the write all the same), closing forwarded once
// the server answered. Every other request goes straight through;
// catalogDone is closed once a catalog write after arming was answered.
type holdProxy struct {
	addr  string
	proxy *httputil.ReverseProxy

	mu          sync.Mutex
	held        string // "" while disarmed or once the held write went
	release     func()
	got         chan struct{}
	forwarded   chan struct{}
	catalogDone chan struct{}
}

func startHold(t *testing.T, target string) *holdProxy {
	h := &holdProxy{proxy: &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: "http", Host: target})
			r.Out.Host = r.In.Host // signatures cover the host the client named
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	h.addr = strings.TrimPrefix(srv.URL, "http://")
	return h
}

// arm holds the next write of the object whose name ends in "/"+name until
// release returns; release gets the channel catalogDone closes.
func (h *holdProxy) arm(name string, release func(catalogDone <-chan struct{})) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got, h.forwarded, h.catalogDone = make(chan struct{}), make(chan struct{}), make(chan struct{})
	catalogDone := h.catalogDone
	h.held, h.release = name, func() { release(catalogDone) }
}

// writes reports whether r (with body) writes the object whose name ends
// in "/"+name: by its path (S3, Azure) or its JSON metadata (GCS).
func writes(r *http.Request, body []byte, name string) bool {
	return (r.Method == http.MethodPut || r.Method == http.MethodPost) &&
		(strings.HasSuffix(r.URL.Path, "/"+name) || bytes.Contains(body, []byte("/"+name+`"`)))
}

func (h *holdProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the body never came whole: the server gets nothing
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	h.mu.Lock()
	held, release, got, forwarded, catalogDone := h.held, h.release, h.got, h.forwarded, h.catalogDone
	hold := held != "" && writes(r, body, held)
	if hold {
		h.held = ""
	}
	h.mu.Unlock()
	if hold {
		close(got)
		release()
		h.proxy.ServeHTTP(w, r.WithContext(context.WithoutCancel(r.Context())))
		close(forwarded)
		return
	}
	h.proxy.ServeHTTP(w, r)
	if catalogDone != nil && writes(r, body, catalog.FileName) {
		h.mu.Lock()
		if h.catalogDone == catalogDone {
			close(catalogDone)
			h.catalogDone = nil
		}
		h.mu.Unlock()
	}
}

// gcsNetServer is a fresh prefix on the fake-gcs-server of
// scripts/test-servers.
func gcsNetServer(t *testing.T) netServer {
	srv := gcstest.FakeGCS(t)
	u, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	prefix := gcstest.Prefix(t)
	return netServer{addr: u.Host, store: srv.Open(t, prefix), getenv: func(string) string { return "" },
		dest: func(t *testing.T, via string) string {
			return fmt.Sprintf("    backend: gcs\n    path: %s\n    gcs:\n      bucket: %s\n      endpoint: http://%s%s\n      anonymous: true\n",
				prefix, srv.Bucket, via, u.Path)
		}}
}

// azureNetServer is a fresh prefix in the Azurite container of
// scripts/test-servers.
func azureNetServer(t *testing.T) netServer {
	srv := azuretest.Azurite(t)
	u, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	opts := srv.Options(srv.UniquePrefix(t))
	return netServer{addr: srv.Addr, store: azuretest.OpenWith(t, opts), getenv: srv.Getenv,
		dest: func(t *testing.T, via string) string {
			return fmt.Sprintf("    backend: azure\n    path: %s\n    azure:\n      account: %s\n      container: %s\n      endpoint: http://%s%s\n",
				opts.Prefix, opts.Account, opts.Container, via, u.Path)
		}}
}

// TestAnswerAfterSignal is issue "truthful after SIGTERM" end to end on
// the object store emulators: a run is cancelled (as by SIGTERM) while the
// server holds an upload whose last byte it got.
//   - answered: the server answers 300ms after the cancel. The run waits
//     for that answer (storage.AnswerGrace), so the root it leaves is
//     truthful at once: nothing of it can still land.
//   - late: the server applies the upload only after the run recorded its
//     partial result (the window left once the wait is over, as after
//     kill -9). The root is then untruthful until the next writer, whose
//     recovery checks the journaled writes the catalog does not record as
//     done, and rolls the late one forward.
func TestAnswerAfterSignal(t *testing.T) {
	servers := []struct {
		name string
		open func(t *testing.T) netServer
	}{{"s3-gofakes3", gofakes3Server}, {"s3-versitygw", versitygwServer}, {"gcs-fake", gcsNetServer}, {"azure-azurite", azureNetServer}}
	for _, s := range servers {
		for _, late := range []bool{false, true} {
			name := s.name + "/answered"
			if late {
				name = s.name + "/late"
			}
			t.Run(name, func(t *testing.T) { answerScenario(t, s.open(t), late) })
		}
	}
}

func answerScenario(t *testing.T, srv netServer, late bool) {
	ctx := t.Context()
	f := newFixture(t, "replacement")
	v1 := map[string]string{"a.txt": "a one\n", "b.txt": "b one\n", "c.txt": "c one\n"}
	v2 := map[string]string{"a.txt": "a two\n", "b.txt": "b two\n", "c.txt": "c two\n"}
	f.bundle("mine", "mine.v1", v1)
	f.bundle("v2", "mine.v2", v2)
	hp := startHold(t, srv.addr)
	cfg := netConfig(t, f.dir, "distributor.yaml", srv.dest(t, hp.addr))
	if d, err := runNet(ctx, netApp(f, srv), cfg, "", 1); err != nil || d.Status != report.StatusOK {
		t.Fatalf("first run: %v %+v", err, d)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	hp.arm("c.txt", func(catalogDone <-chan struct{}) {
		cancel() // the signal, once the server has the upload's last byte
		if late {
			select { // until the run recorded its partial result
			case <-catalogDone:
			case <-time.After(10 * time.Second):
				t.Error("the cancelled run wrote no catalog within 10s")
			}
		} else {
			time.Sleep(300 * time.Millisecond)
		}
	})
	start := time.Now()
	d, err := runNet(runCtx, netApp(f, srv), cfg, f.dir+"/v2", 1)
	if d != nil && d.Error != nil {
		t.Logf("the cancelled run ended after %v: %s", time.Since(start).Round(time.Millisecond), *d.ErrorDetail)
	}
	if err == nil && d.Status == report.StatusOK {
		t.Fatal("the cancelled run succeeded")
	}
	select {
	case <-hp.forwarded:
	case <-time.After(10 * time.Second):
		t.Fatal("the held upload was never forwarded")
	}
	if !late {
		auditStore(t, srv.store, "after the cancelled run") // nothing of it can land later
		if _, err := srv.store.Stat(ctx, "c.txt"); err != nil {
			t.Fatal(err)
		}
	}
	// The next run publishes v1 again: a record of c.txt left naming v1's
	// bytes would make it skip c.txt, whose object holds v2's.
	if d, err := runNet(ctx, netApp(f, srv), cfg, "", 1); err != nil || d.Status != report.StatusOK {
		t.Fatalf("next run: %v %+v", err, d)
	}
	c := auditStore(t, srv.store, "after the next run")
	wantPublished(t, srv.store, c, v1)
	if _, err := srv.store.Stat(ctx, journal.Name); err == nil {
		t.Error("the journal outlived the next run")
	}
}

// auditStore checks that every record of the root's catalog names the
// bytes its object holds, and returns the catalog.
func auditStore(t *testing.T, st storage.Store, when string) *catalog.Catalog {
	t.Helper()
	r, err := ReadRoot(t.Context(), st)
	if err != nil || r.State.Status != catalog.StatusCatalog {
		t.Fatalf("%s: catalog %v %v", when, r.State.Status, err)
	}
	audit, err := Audit(t.Context(), st, r.State.Catalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !audit.Truthful() {
		t.Fatalf("%s: the catalog is not truthful: missing %v, corrupt %v", when, audit.Missing, audit.Corrupt)
	}
	return r.State.Catalog
}
