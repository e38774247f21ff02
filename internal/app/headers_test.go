package app

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/gcs/gcstest"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// requestCounter counts the HTTP requests a store sends, by method.
type requestCounter struct {
	mu       sync.Mutex
	byMethod map[string]int
	// steps, when not nil, collects each request as describeRequest names
	// it, in the order they were answered (see takeSteps).
	steps []string
	next  http.RoundTripper
}

func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.byMethod[r.Method]++
	record := c.steps != nil
	c.mu.Unlock()
	if !record {
		return c.next.RoundTrip(r)
	}
	step := describeRequest(r)
	resp, err := c.next.RoundTrip(r)
	switch {
	case err != nil:
		step += ": " + err.Error()
	case resp.StatusCode >= 300:
		step += ": " + strconv.Itoa(resp.StatusCode)
	}
	c.mu.Lock()
	c.steps = append(c.steps, step)
	c.mu.Unlock()
	return resp, err
}

func (c *requestCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.byMethod
	c.byMethod = map[string]int{}
	return m
}

// s3SiteYAML is the configuration of pipeline mine publishing to
// destination site on the S3 test server srv, in bucket at prefix; more
// holds further lines of the destination (indented by four spaces).
func s3SiteYAML(srv *s3test.Server, bucket, prefix, more string) string {
	return fmt.Sprintf(`pipelines:
  - {id: mine, source: mine, destinations: [site]}
destinations:
  - id: site
    backend: s3
    path: %s
%s    s3: {bucket: %s, region: %s, endpoint: %q, path_style: true}
`, prefix, more, bucket, srv.Region, srv.URL)
}

// objectHeaders are the headers rules' fields of a stored object.
type objectHeaders struct{ CacheControl, ContentType, ContentDisposition, ContentEncoding string }

// headersRoot is a root of its own on a test server, for TestHeaders.
type headersRoot struct {
	endpoint string              // the server's endpoint, as the destination names it
	getenv   func(string) string // the credentials; nil for none
	// block is the destination's backend fields with the server reached
	// at endpoint.
	block func(endpoint string) string
	// head reads the headers of the object name (below the root) with a
	// client independent of distributor.
	head func(t *testing.T, name string) objectHeaders
}

// headersBackends are the backends TestHeaders runs on.
var headersBackends = []struct {
	name string
	open func(t *testing.T) headersRoot
}{
	{"s3-versitygw", func(t *testing.T) headersRoot { return s3HeadersRoot(t, s3test.Versitygw(t)) }},
	{"s3-seaweedfs", func(t *testing.T) headersRoot { return s3HeadersRoot(t, s3test.Weed(t)) }},
	{"gcs-fake", gcsHeadersRoot},
	{"azure-azurite", azureHeadersRoot},
}

// s3HeadersRoot reads the objects with minio-go's StatObject.
func s3HeadersRoot(t *testing.T, srv *s3test.Server) headersRoot {
	prefix := "headers/" + rand.Text()[:10]
	srv.Open(t, prefix) // removes the prefix's objects when the test ends
	mc, err := minio.New(strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://"), &minio.Options{
		Creds:  credentials.NewStaticV4(srv.Env["AWS_ACCESS_KEY_ID"], srv.Env["AWS_SECRET_ACCESS_KEY"], ""),
		Secure: strings.HasPrefix(srv.URL, "https://"), Region: srv.Region, BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return headersRoot{endpoint: srv.URL, getenv: srv.Getenv,
		block: func(endpoint string) string {
			return fmt.Sprintf("    backend: s3\n    path: %s\n    s3: {bucket: %s, region: %s, endpoint: %q, path_style: true}\n",
				prefix, srv.Bucket, srv.Region, endpoint)
		},
		head: func(t *testing.T, name string) objectHeaders {
			t.Helper()
			info, err := mc.StatObject(t.Context(), srv.Bucket, prefix+"/"+name, minio.StatObjectOptions{})
			if err != nil {
				t.Fatalf("HEAD %s: %v", name, err)
			}
			h := info.Metadata
			return objectHeaders{h.Get("Cache-Control"), h.Get("Content-Type"), h.Get("Content-Disposition"), h.Get("Content-Encoding")}
		},
	}
}

// gcsHeadersRoot reads the objects' resources from the JSON API with
// net/http.
func gcsHeadersRoot(t *testing.T) headersRoot {
	srv := gcstest.FakeGCS(t)
	prefix := gcstest.Prefix(t)
	srv.Open(t, prefix) // removes the prefix's objects when the test ends
	return headersRoot{endpoint: srv.Endpoint,
		block: func(endpoint string) string {
			return fmt.Sprintf("    backend: gcs\n    path: %s\n    gcs: {bucket: %s, endpoint: %q, anonymous: true}\n",
				prefix, srv.Bucket, endpoint)
		},
		head: func(t *testing.T, name string) objectHeaders {
			t.Helper()
			resp, err := http.Get(srv.Endpoint + "b/" + srv.Bucket + "/o/" + url.PathEscape(prefix+"/"+name))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var o struct{ CacheControl, ContentType, ContentDisposition, ContentEncoding string }
			if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %s, %v", name, resp.Status, err)
			}
			return objectHeaders(o)
		},
	}
}

// azureHeadersRoot reads the blobs' properties with the SDK's container
// client.
func azureHeadersRoot(t *testing.T) headersRoot {
	srv := azuretest.Azurite(t)
	prefix := srv.UniquePrefix(t)
	c := srv.Client(t, srv.Container)
	return headersRoot{endpoint: srv.Endpoint, getenv: srv.Getenv,
		block: func(endpoint string) string {
			return fmt.Sprintf("    backend: azure\n    path: %s\n    azure: {account: %s, container: %s, endpoint: %q}\n",
				prefix, srv.Account, srv.Container, endpoint)
		},
		head: func(t *testing.T, name string) objectHeaders {
			t.Helper()
			p, err := c.NewBlobClient(prefix+"/"+name).GetProperties(t.Context(), nil)
			if err != nil {
				t.Fatalf("Get Blob Properties %s: %v", name, err)
			}
			str := func(s *string) string {
				if s == nil {
					return ""
				}
				return *s
			}
			return objectHeaders{str(p.CacheControl), str(p.ContentType), str(p.ContentDisposition), str(p.ContentEncoding)}
		},
	}
}

// countingGateway starts, until the test ends, a reverse proxy on
// 127.0.0.1 in front of endpoint whose transport is counter, and returns
// the endpoint through it (the same path). It keeps the Host the client
// sent, which S3's signatures cover.
func countingGateway(t *testing.T, endpoint string, counter *requestCounter) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true // pass bodies on as stored: a gzip object stays gzip
	counter.next = tr
	gw := httptest.NewServer(&httputil.ReverseProxy{Transport: counter, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
		r.Out.Host = r.In.Host
	}})
	t.Cleanup(gw.Close)
	return gw.URL + target.Path
}

// headersConfig is pipeline mine publishing to destination site (block:
// its backend fields) with the given headers rules (YAML list items).
func headersConfig(t *testing.T, f *fixture, block, rules string) *config.Config {
	t.Helper()
	y := fmt.Sprintf(`pipelines:
  - {id: mine, source: mine, destinations: [site]}
destinations:
  - id: site
%s    paths: {rename: {report.md: index.md}}
`, block)
	if rules != "" {
		y += "    headers:\n" + rules
	}
	return writeConfig(t, f.dir, "distributor.yaml", y)
}

// TestHeaders runs against the real S3 servers, fake-gcs-server and
// Azurite of scripts/test-servers: the objects a run stores carry the
// Cache-Control, Content-Type and Content-Disposition of the first
// matching rule, as an independent client sees them; a change of rules
// alone rewrites nothing, run --rewrite applies it; and a no-op rerun
// sends the same few requests with rules as without.
func TestHeaders(t *testing.T) {
	for _, b := range headersBackends {
		t.Run(b.name, func(t *testing.T) {
			h := newHeadersRun(t, b.open(t))
			const rules = `      - {match: "**/*.html", cache_control: no-cache}
      - {match: "**/*.{css,js,png,svg}", cache_control: "public, max-age=31536000, immutable"}
      - {match: "**/*.csv", content_type: "text/csv; charset=utf-8", content_disposition: attachment}
      - {match: "**", cache_control: "max-age=60"}
`
			noopPlain := h.noopWithoutRules(t)
			cfg := headersConfig(t, h.f, h.block, rules)
			h.rulesAloneRewriteNothing(t, cfg, noopPlain)
			h.rewriteApplies(t, cfg, noopPlain)
			h.changedRulesAndNewBundle(t)
		})
	}
}

// headersRun is TestHeaders on one backend: its root, the fixture with
// bundle mine, the app, and the counter of the requests the app sends
// through the gateway that block names.
type headersRun struct {
	root    headersRoot
	f       *fixture
	a       *App
	block   string
	counter *requestCounter
}

func newHeadersRun(t *testing.T, root headersRoot) *headersRun {
	f := newFixture(t, "additive") // its bundle directories; the configurations come below
	f.bundle("mine", "mine.one", map[string]string{
		"report.md": "# Report\n", "style.css": "body{}", "img/chart.svg": "<svg/>",
		"data/today.csv": "a,b\n1,2\n", "notes.txt": "plain",
	})
	counter := &requestCounter{byMethod: map[string]int{}}
	block := root.block(countingGateway(t, root.endpoint, counter))
	a := f.app(nil)
	if root.getenv != nil {
		a.Getenv = root.getenv
	}
	return &headersRun{root: root, f: f, a: a, block: block, counter: counter}
}

// run runs pipeline mine with cfg, which must succeed.
func (h *headersRun) run(t *testing.T, cfg *config.Config, rewrite bool) *report.Destination {
	t.Helper()
	rep, err := h.a.Run(t.Context(), cfg, RunOptions{Pipelines: []string{"mine"}, Rewrite: rewrite})
	if err != nil {
		t.Fatal(err)
	}
	d := &rep.Pipelines[0].Destinations[0]
	if d.Status != report.StatusOK {
		t.Fatalf("run: %s %v", d.Status, *d.Error)
	}
	return d
}

// expect checks the headers object p carries.
func (h *headersRun) expect(t *testing.T, p, cacheControl, contentType, disposition string) {
	t.Helper()
	o := h.root.head(t, p)
	if got := o.CacheControl; got != cacheControl {
		t.Errorf("%s: Cache-Control %q, want %q", p, got, cacheControl)
	}
	if got := o.ContentType; got != contentType {
		t.Errorf("%s: Content-Type %q, want %q", p, got, contentType)
	}
	if got := o.ContentDisposition; got != disposition {
		t.Errorf("%s: Content-Disposition %q, want %q", p, got, disposition)
	}
}

// noopWithoutRules publishes without rules and returns the requests of a
// no-op rerun, for the request count.
func (h *headersRun) noopWithoutRules(t *testing.T) map[string]int {
	plain := headersConfig(t, h.f, h.block, "")
	h.run(t, plain, false)
	h.counter.take()
	if d := h.run(t, plain, false); d.Action != "skip_same" {
		t.Fatalf("rerun: %s", d.Action)
	}
	return h.counter.take()
}

// rulesAloneRewriteNothing: rules changed, bytes did not: nothing is
// rewritten.
func (h *headersRun) rulesAloneRewriteNothing(t *testing.T, cfg *config.Config, noopPlain map[string]int) {
	if d := h.run(t, cfg, false); d.Action != "skip_same" {
		t.Fatalf("rules alone: %s, want skip_same", d.Action)
	}
	if got := h.counter.take(); fmt.Sprint(got) != fmt.Sprint(noopPlain) {
		t.Errorf("no-op rerun with rules sent %v, without %v", got, noopPlain)
	}
	h.expect(t, "style.css", "", "text/css; charset=utf-8", "")
}

// rewriteApplies: --rewrite applies the rules; a no-op rerun with rules
// then sends exactly what one without does.
func (h *headersRun) rewriteApplies(t *testing.T, cfg *config.Config, noopPlain map[string]int) {
	d := h.run(t, cfg, true)
	if d.Action != "upsert_additive" || d.Counts.Overwritten != 5 {
		t.Fatalf("rewrite: %s %+v", d.Action, d.Counts)
	}
	h.expect(t, "index.html", "no-cache", "text/html; charset=utf-8", "")
	h.expect(t, "style.css", "public, max-age=31536000, immutable", "text/css; charset=utf-8", "")
	h.expect(t, "img/chart.svg", "public, max-age=31536000, immutable", "image/svg+xml", "")
	h.expect(t, "data/today.csv", "", "text/csv; charset=utf-8", "attachment")
	h.expect(t, "notes.txt", "max-age=60", "text/plain; charset=utf-8", "")
	h.counter.take()
	if d := h.run(t, cfg, false); d.Action != "skip_same" {
		t.Fatalf("rerun: %s", d.Action)
	}
	noop := h.counter.take()
	if fmt.Sprint(noop) != fmt.Sprint(noopPlain) || noop["PUT"] != 0 || noop["DELETE"] != 0 {
		t.Errorf("no-op rerun with rules sent %v, without rules %v", noop, noopPlain)
	}
	t.Logf("a no-op rerun sends %v", noop)
}

// changedRulesAndNewBundle: changed rules plus --rewrite re-apply; a new
// bundle applies the rules to what it writes without --rewrite.
func (h *headersRun) changedRulesAndNewBundle(t *testing.T) {
	cfg := headersConfig(t, h.f, h.block, `      - {match: "*.css", cache_control: "max-age=5"}
`)
	h.run(t, cfg, true)
	h.expect(t, "notes.txt", "", "text/plain; charset=utf-8", "")
	h.expect(t, "style.css", "max-age=5", "text/css; charset=utf-8", "")
	h.expect(t, "index.html", "", "text/html; charset=utf-8", "")
	h.f.bundle("mine", "mine.two", map[string]string{"report.md": "# Report 2\n", "style.css": "body{color:red}"})
	cfg = headersConfig(t, h.f, h.block, `      - {match: "*.css", cache_control: "max-age=7"}
      - {match: "*.html", cache_control: "no-store"}
`)
	h.run(t, cfg, false)
	h.expect(t, "style.css", "max-age=7", "text/css; charset=utf-8", "")
	h.expect(t, "index.html", "no-store", "text/html; charset=utf-8", "")
	// notes.txt (no longer in the bundle, kept by additive) is as the
	// last --rewrite left it: no rule matched it then, so it has no
	// Cache-Control any more.
	h.expect(t, "notes.txt", "", "text/plain; charset=utf-8", "")
}
