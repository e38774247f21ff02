package registry_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	_ "github.com/distributor-dev/distributor/backend/all"
	. "github.com/distributor-dev/distributor/internal/storage/registry"
)

// TestBackendsAreComplete: every backend has a unique name, a title, a
// summary, a default number of jobs and an Open; a backend with a block
// decodes it, says what it needs and describes it in a JSON Schema whose
// properties are exactly its Fields; one without a block has neither.
func TestBackendsAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range All() {
		if b.Name == "" || seen[b.Name] {
			t.Errorf("backend %q: empty or repeated name", b.Name)
		}
		seen[b.Name] = true
		if b.Title == "" || b.Summary == "" || b.Jobs < 1 || b.Open == nil {
			t.Errorf("backend %s: Title %q, Summary %q, Jobs %d, Open set %v", b.Name, b.Title, b.Summary, b.Jobs, b.Open != nil)
		}
		if got, ok := Lookup(b.Name); !ok || got.Name != b.Name {
			t.Errorf("Lookup(%q) = %q, %v", b.Name, got.Name, ok)
		}
		if len(b.Fields) == 0 {
			if b.Decode != nil || b.Schema != "" || b.Needs != "" {
				t.Errorf("backend %s has no Fields but a Decode, Schema or Needs", b.Name)
			}
			continue
		}
		if b.Decode == nil || b.Needs == "" || b.Location == nil {
			t.Errorf("backend %s has Fields but no Decode, Needs or Location", b.Name)
		}
		var frag struct {
			Type                 string                     `json:"type"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
			Properties           map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal([]byte(b.Schema), &frag); err != nil {
			t.Errorf("backend %s: Schema is not JSON: %v", b.Name, err)
			continue
		}
		var props []string
		for name := range frag.Properties {
			props = append(props, name)
		}
		slices.Sort(props)
		fields := slices.Sorted(slices.Values(b.Fields))
		if !slices.Equal(props, fields) || frag.Type != "object" || frag.AdditionalProperties == nil || *frag.AdditionalProperties {
			t.Errorf("backend %s: schema properties %v (type %q, additionalProperties %v), Fields %v", b.Name, props, frag.Type, frag.AdditionalProperties, fields)
		}
	}
	if _, ok := Lookup("gopher"); ok {
		t.Error(`Lookup("gopher") found a backend`)
	}
	if got := JobsDefaults(); got != "4 for local and ftp, 8 for sftp, s3, gcs and azure" {
		t.Errorf("JobsDefaults = %q", got)
	}
	if got := List([]string{"a", "b", "c"}, "or"); got != "a, b or c" {
		t.Errorf("List = %q", got)
	}
}

// TestForeignSettingsRefused: a backend with a block, given settings that
// are not its own (a library caller's mistake), says so from Open and names
// no location, without a panic and without a request.
func TestForeignSettingsRefused(t *testing.T) {
	type foreign struct{}
	for _, b := range All() {
		if len(b.Fields) == 0 {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			if st, err := b.Open(context.Background(), foreign{}, "root", func(string) string { return "" }); err == nil {
				st.Close()
				t.Errorf("Open with foreign settings: no error")
			}
			b.Location(foreign{})
			b.Location(nil)
		})
	}
}

// TestOrderAndDuplicates: backends list in the documented order whatever
// order their packages registered in, and a second registration of a name
// panics.
func TestOrderAndDuplicates(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"local", "sftp", "s3", "gcs", "azure", "ftp"}) {
		t.Errorf("Names = %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering local twice did not panic")
		}
	}()
	b, _ := Lookup("local")
	Register(b)
}
