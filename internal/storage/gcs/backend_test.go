package gcs_test

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/blocktest"
	"github.com/distributor-dev/distributor/internal/storage/gcs"
)

// block is a storage.Block of plain values that records the problems
// reported through it.
type block struct {
	vals     map[string]any
	problems []string
}

func (b *block) String(name string, required bool) (string, bool) {
	v, ok := b.vals[name].(string)
	if !ok && required {
		b.Errorf(name, "required")
	}
	return v, ok
}

func (b *block) Bool(name string, def bool) bool {
	if v, ok := b.vals[name].(bool); ok {
		return v
	}
	return def
}

func (b *block) Int(name string) (int64, bool) { v, ok := b.vals[name].(int64); return v, ok }

func (b *block) Duration(name string) time.Duration {
	s, _ := b.vals[name].(string)
	d, _ := time.ParseDuration(s)
	return d
}

func (b *block) LocalPath(name, s string) string { return s }
func (b *block) URL(name, s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		b.Errorf(name, "%q is not an http(s) URL", s)
		return nil, false
	}
	return u, true
}
func (b *block) Has(name string) bool     { _, ok := b.vals[name]; return ok }
func (b *block) Require(name, why string) { b.Errorf(name, "is required (%s)", why) }

func (b *block) Errorf(name, format string, args ...any) {
	b.problems = append(b.problems, name+": "+fmt.Sprintf(format, args...))
}

var _ storage.Block = (*block)(nil)

func TestDecode(t *testing.T) {
	b := &block{vals: map[string]any{"bucket": "reports-prod", "endpoint": "http://127.0.0.1:4443/storage/v1/",
		"anonymous": true, "idle_timeout": "45s", "dial_timeout": "5s"}}
	got := gcs.Backend().Decode(b).(*gcs.Options)
	want := gcs.Options{Bucket: "reports-prod", Endpoint: "http://127.0.0.1:4443/storage/v1/", Anonymous: true,
		IdleTimeout: 45 * time.Second, DialTimeout: 5 * time.Second}
	if len(b.problems) > 0 || !reflect.DeepEqual(*got, want) {
		t.Fatalf("Decode = %+v, problems %q; want %+v", *got, b.problems, want)
	}
	if loc := gcs.Backend().Location(got); loc != "gs://reports-prod at http://127.0.0.1:4443/storage/v1" {
		t.Errorf("Location = %q", loc)
	}
	if loc := gcs.Backend().Location(&gcs.Options{Bucket: "x"}); !strings.Contains(loc, "storage.googleapis.com") {
		t.Errorf("Location without endpoint = %q", loc)
	}
	for name, vals := range map[string]map[string]any{
		"no bucket":       {},
		"bad bucket":      {"bucket": "Reports"},
		"short bucket":    {"bucket": "ab"},
		"long bucket":     {"bucket": strings.Repeat("a", 64)},
		"double dot":      {"bucket": "a..b"},
		"endpoint scheme": {"bucket": "abc", "endpoint": "ftp://host/"},
	} {
		b := &block{vals: vals}
		gcs.Backend().Decode(b)
		if len(b.problems) == 0 {
			t.Errorf("%s: Decode reported no problem", name)
		}
	}
	b = &block{vals: map[string]any{"bucket": strings.Repeat("a", 40) + ".b_c-" + strings.Repeat("d", 40)}}
	gcs.Backend().Decode(b)
	if len(b.problems) > 0 {
		t.Errorf("a dotted bucket name over 63 characters: %q", b.problems)
	}
}

// TestBlockSchema: schema.json says what the Block struct says.
func TestBlockSchema(t *testing.T) {
	blocktest.CheckSchema(t, gcs.Block{}, gcs.Backend().Schema, "gcs.go")
}
