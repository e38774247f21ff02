package azure_test

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/blocktest"
)

// block is a storage.Block over a map, recording the problems reported.
type block struct {
	m        map[string]any
	problems []string
}

func (b *block) problem(name, format string, args ...any) {
	b.problems = append(b.problems, name+": "+fmt.Sprintf(format, args...))
}

func (b *block) String(name string, required bool) (string, bool) {
	v, ok := b.m[name]
	if !ok {
		if required {
			b.problem(name, "required")
		}
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		b.problem(name, "not a string")
	}
	return s, ok
}

func (b *block) Bool(name string, def bool) bool {
	if v, ok := b.m[name].(bool); ok {
		return v
	}
	return def
}

func (b *block) Int(name string) (int64, bool) { v, ok := b.m[name].(int64); return v, ok }

func (b *block) Duration(name string) time.Duration {
	s, _ := b.m[name].(string)
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		b.problem(name, "not a positive duration")
		return 0
	}
	return d
}

func (b *block) LocalPath(name, s string) string { return s }

func (b *block) URL(name, s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		b.problem(name, "not an http(s) URL")
		return nil, false
	}
	return u, true
}

func (b *block) Require(name, why string) { b.problem(name, "is required (%s)", why) }

func (b *block) Has(name string) bool { _, ok := b.m[name]; return ok }

func (b *block) Errorf(name, format string, args ...any) { b.problem(name, format, args...) }

var _ storage.Block = (*block)(nil)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		m        map[string]any
		want     azure.Settings
		problems []string // members with a problem
	}{
		{"minimal", map[string]any{"account": "reportsprod", "container": "$web"},
			azure.Settings{Account: "reportsprod", Container: "$web"}, nil},
		{"all", map[string]any{"account": "devstoreaccount1", "container": "site", "endpoint": "http://127.0.0.1:10000/devstoreaccount1",
			"dial_timeout": "5s", "response_timeout": "1m", "idle_timeout": "20s"},
			azure.Settings{Account: "devstoreaccount1", Container: "site", Endpoint: "http://127.0.0.1:10000/devstoreaccount1",
				DialTimeout: 5 * time.Second, ResponseTimeout: time.Minute, IdleTimeout: 20 * time.Second}, nil},
		{"missing", map[string]any{}, azure.Settings{}, []string{"account", "container"}},
		{"bad names", map[string]any{"account": "Reports_Prod", "container": "a--b"},
			azure.Settings{Account: "Reports_Prod", Container: "a--b"}, []string{"account", "container"}},
		{"bad endpoint", map[string]any{"account": "abc", "container": "abc", "endpoint": "ftp://x"},
			azure.Settings{Account: "abc", Container: "abc"}, []string{"endpoint"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &block{m: tc.m}
			got := azure.Backend().Decode(b)
			if got != tc.want {
				t.Errorf("Decode = %+v, want %+v", got, tc.want)
			}
			var members []string
			for _, p := range b.problems {
				members = append(members, strings.SplitN(p, ":", 2)[0])
			}
			if !slices.Equal(members, tc.problems) {
				t.Errorf("problems %q, want problems with %q", b.problems, tc.problems)
			}
		})
	}
}

// TestBackendDescriptor: the schema is valid JSON Schema, accepts what
// Decode accepts and refuses what it refuses; Fields are the schema's
// properties; Location tells containers apart.
func TestBackendDescriptor(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(azure.Backend().Schema))
	if err != nil {
		t.Fatalf("Schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("azure.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("azure.json")
	if err != nil {
		t.Fatalf("Schema does not compile: %v", err)
	}
	props := doc.(map[string]any)["properties"].(map[string]any)
	for _, f := range azure.Backend().Fields {
		if props[f] == nil {
			t.Errorf("field %s is not in the schema", f)
		}
	}
	if len(props) != len(azure.Backend().Fields) {
		t.Errorf("schema has %d properties, Fields %d", len(props), len(azure.Backend().Fields))
	}
	for js, valid := range map[string]bool{
		`{"account": "reportsprod", "container": "$web"}`: true,
		`{"account": "devstoreaccount1", "container": "distributor-test", "endpoint": "http://127.0.0.1:10000/devstoreaccount1", "idle_timeout": "20s"}`: true,
		`{"account": "reportsprod"}`:                                                     false,
		`{"account": "Reports", "container": "site"}`:                                    false,
		`{"account": "reportsprod", "container": "ab"}`:                                  false,
		`{"account": "reportsprod", "container": "site", "bucket": "x"}`:                 false,
		`{"account": "reportsprod", "container": "site", "endpoint": "http://h/?sig=x"}`: false,
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(js)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); (err == nil) != valid {
			t.Errorf("%s: valid %v, want %v (%v)", js, err == nil, valid, err)
		}
	}
	a := azure.Backend().Location(azure.Settings{Account: "reportsprod", Container: "$web"})
	b := azure.Backend().Location(azure.Settings{Account: "reportsprod", Container: "site"})
	e := azure.Backend().Location(azure.Settings{Account: "devstoreaccount1", Container: "site", Endpoint: "http://127.0.0.1:10000/devstoreaccount1/"})
	if a != "azure:https://reportsprod.blob.core.windows.net/$web" || a == b || e != "azure:http://127.0.0.1:10000/devstoreaccount1/site" {
		t.Errorf("Locations %q, %q, %q", a, b, e)
	}
	if azure.Backend().Name != "azure" || azure.Backend().Path != storage.PathKey || !azure.Backend().Properties.ServerConditions {
		t.Errorf("descriptor %+v", azure.Backend())
	}
}

// TestBlockSchema: schema.json says what the Settings struct says.
func TestBlockSchema(t *testing.T) {
	blocktest.CheckSchema(t, azure.Settings{}, azure.Backend().Schema, "backend.go")
}
