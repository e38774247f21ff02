package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/retry"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// requestCounter counts the HTTP requests a store sends, by method.
type requestCounter struct {
	mu       sync.Mutex
	byMethod map[string]int
	next     http.RoundTripper
}

func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.byMethod[r.Method]++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
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

// headersConfig is a destination site on srv at prefix with the given
// headers rules (YAML list items).
func headersConfig(t *testing.T, f *fixture, srv *s3test.Server, prefix, rules string) *config.Config {
	t.Helper()
	y := s3SiteYAML(srv, srv.Bucket, prefix, "    paths: {rename: {report.md: index.md}}\n")
	if rules != "" {
		y += "    headers:\n" + rules
	}
	return writeConfig(t, f.dir, "distributor.yaml", y)
}

// TestS3Headers runs against the real S3 servers of scripts/test-servers:
// the objects a run stores carry the Cache-Control, Content-Type and
// Content-Disposition of the first matching rule, as an independent client
// sees them; a change of rules alone rewrites nothing, run --rewrite
// applies it; and a no-op rerun sends the same few requests with rules as
// without.
func TestS3Headers(t *testing.T) {
	for name, open := range map[string]func(testing.TB) *s3test.Server{
		"versitygw": s3test.Versitygw, "seaweedfs": s3test.Weed,
	} {
		t.Run(name, func(t *testing.T) {
			srv := open(t)
			prefix := "headers/" + rand.Text()[:10]
			srv.Open(t, prefix)            // removes the prefix's objects when the test ends
			f := newFixture(t, "additive") // its bundle directories; the configurations come below
			f.bundle("mine", "mine.one", map[string]string{
				"report.md": "# Report\n", "style.css": "body{}", "img/chart.svg": "<svg/>",
				"data/today.csv": "a,b\n1,2\n", "notes.txt": "plain",
			})
			counter := &requestCounter{byMethod: map[string]int{}}
			a := f.app(nil)
			a.Getenv = srv.Getenv
			a.Open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
				opts := d.Settings.(*s3.Options).ForRoot(root, srv.Getenv)
				opts.Transport = counter
				tr, err := minio.DefaultTransport(strings.HasPrefix(srv.URL, "https://"))
				if err != nil {
					return nil, err
				}
				counter.next = tr
				st, err := s3.New(ctx, opts)
				if err != nil {
					return nil, err
				}
				return retry.New(st, retry.Options{}), nil
			}
			run := func(cfg *config.Config, rewrite bool) *report.Destination {
				t.Helper()
				rep, err := a.Run(t.Context(), cfg, RunOptions{Pipeline: "mine", Rewrite: rewrite})
				if err != nil {
					t.Fatal(err)
				}
				d := &rep.Pipelines[0].Destinations[0]
				if d.Status != report.StatusOK {
					t.Fatalf("run: %s %v", d.Status, d.Error)
				}
				return d
			}
			mc, err := minio.New(strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://"), &minio.Options{
				Creds:  credentials.NewStaticV4(srv.Env["AWS_ACCESS_KEY_ID"], srv.Env["AWS_SECRET_ACCESS_KEY"], ""),
				Secure: strings.HasPrefix(srv.URL, "https://"), Region: srv.Region, BucketLookup: minio.BucketLookupPath,
			})
			if err != nil {
				t.Fatal(err)
			}
			head := func(p string) http.Header {
				t.Helper()
				info, err := mc.StatObject(t.Context(), srv.Bucket, prefix+"/"+p, minio.StatObjectOptions{})
				if err != nil {
					t.Fatalf("HEAD %s: %v", p, err)
				}
				return info.Metadata
			}
			expect := func(p, cacheControl, contentType, disposition string) {
				t.Helper()
				h := head(p)
				if got := h.Get("Cache-Control"); got != cacheControl {
					t.Errorf("%s: Cache-Control %q, want %q", p, got, cacheControl)
				}
				if got := h.Get("Content-Type"); got != contentType {
					t.Errorf("%s: Content-Type %q, want %q", p, got, contentType)
				}
				if got := h.Get("Content-Disposition"); got != disposition {
					t.Errorf("%s: Content-Disposition %q, want %q", p, got, disposition)
				}
			}
			const rules = `      - {match: "**/*.html", cache_control: no-cache}
      - {match: "**/*.{css,js,png,svg}", cache_control: "public, max-age=31536000, immutable"}
      - {match: "**/*.csv", content_type: "text/csv; charset=utf-8", content_disposition: attachment}
      - {match: "**", cache_control: "max-age=60"}
`
			// A no-op rerun without rules, for the request count.
			plain := headersConfig(t, f, srv, prefix, "")
			run(plain, false)
			counter.take()
			if d := run(plain, false); d.Action != "skip_same" {
				t.Fatalf("rerun: %s", d.Action)
			}
			noopPlain := counter.take()

			cfg := headersConfig(t, f, srv, prefix, rules)
			// Rules changed, bytes did not: nothing is rewritten.
			if d := run(cfg, false); d.Action != "skip_same" {
				t.Fatalf("rules alone: %s, want skip_same", d.Action)
			}
			if got := counter.take(); fmt.Sprint(got) != fmt.Sprint(noopPlain) {
				t.Errorf("no-op rerun with rules sent %v, without %v", got, noopPlain)
			}
			expect("style.css", "", "text/css; charset=utf-8", "")
			// --rewrite applies them.
			d := run(cfg, true)
			if d.Action != "upsert_additive" || d.Counts.Overwritten != 5 {
				t.Fatalf("rewrite: %s %+v", d.Action, d.Counts)
			}
			expect("index.html", "no-cache", "text/html; charset=utf-8", "")
			expect("style.css", "public, max-age=31536000, immutable", "text/css; charset=utf-8", "")
			expect("img/chart.svg", "public, max-age=31536000, immutable", "image/svg+xml", "")
			expect("data/today.csv", "", "text/csv; charset=utf-8", "attachment")
			expect("notes.txt", "max-age=60", "text/plain; charset=utf-8", "")
			// A no-op rerun with rules sends exactly what one without does.
			counter.take()
			if d := run(cfg, false); d.Action != "skip_same" {
				t.Fatalf("rerun: %s", d.Action)
			}
			noop := counter.take()
			if fmt.Sprint(noop) != fmt.Sprint(noopPlain) || noop["PUT"] != 0 || noop["DELETE"] != 0 {
				t.Errorf("no-op rerun with rules sent %v, without rules %v", noop, noopPlain)
			}
			t.Logf("a no-op rerun sends %v", noop)

			// Changed rules plus --rewrite re-apply; a new bundle applies the
			// rules to what it writes without --rewrite.
			cfg = headersConfig(t, f, srv, prefix, `      - {match: "*.css", cache_control: "max-age=5"}
`)
			run(cfg, true)
			expect("notes.txt", "", "text/plain; charset=utf-8", "")
			expect("style.css", "max-age=5", "text/css; charset=utf-8", "")
			expect("index.html", "", "text/html; charset=utf-8", "")
			f.bundle("mine", "mine.two", map[string]string{"report.md": "# Report 2\n", "style.css": "body{color:red}"})
			cfg = headersConfig(t, f, srv, prefix, `      - {match: "*.css", cache_control: "max-age=7"}
      - {match: "*.html", cache_control: "no-store"}
`)
			run(cfg, false)
			expect("style.css", "max-age=7", "text/css; charset=utf-8", "")
			expect("index.html", "no-store", "text/html; charset=utf-8", "")
			// notes.txt (no longer in the bundle, kept by additive) is as the
			// last --rewrite left it: no rule matched it then, so it has no
			// Cache-Control any more.
			expect("notes.txt", "", "text/plain; charset=utf-8", "")
		})
	}
}
