package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

const repoRoot = "../.."

// compiledSchema compiles Schema() against the draft 2020-12 meta-schema,
// with format assertions on.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatalf("schema.json is not JSON: %v", err)
	}
	id, _ := doc.(map[string]any)["$id"].(string)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatalf("schema.json does not compile: %v", err)
	}
	return sch
}

// validateYAML validates a YAML configuration against the schema, as an
// editor does: YAML is read into plain values and checked as JSON.
func validateYAML(t *testing.T, sch *jsonschema.Schema, data []byte) error {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("YAML: %v", err)
	}
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("YAML to JSON: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(inst)
}

func TestSchemaIsDraft202012(t *testing.T) {
	compiledSchema(t)
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", doc["$schema"])
	}
	// Every marker of the template is replaced.
	if m := regexp.MustCompile(`@[a-z_]+@`).Find(Schema()); m != nil {
		t.Errorf("the schema still holds the template's marker %s", m)
	}
	// Schema returns a copy.
	s := Schema()
	s[0] = 'x'
	if Schema()[0] == 'x' {
		t.Errorf("Schema returns the embedded bytes themselves")
	}
}

// TestSchemaMatchesDecoder keeps schema.json in step with the decoder: the
// same fields in every block, the same enums and the same patterns.
func TestSchemaMatchesDecoder(t *testing.T) {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]struct {
			Properties           map[string]json.RawMessage `json:"properties"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		} `json:"$defs"`
		AdditionalProperties *bool `json:"additionalProperties"`
	}
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var k []string
		for name := range m {
			k = append(k, name)
		}
		sort.Strings(k)
		return k
	}
	sorted := func(s []string) []string {
		s = slices.Clone(s)
		sort.Strings(s)
		return s
	}
	if got := keys(doc.Properties); !slices.Equal(got, sorted(rootFields)) {
		t.Errorf("top level: schema %v, decoder %v", got, sorted(rootFields))
	}
	if doc.AdditionalProperties == nil || *doc.AdditionalProperties {
		t.Errorf("top level: additionalProperties must be false")
	}
	blocks := map[string][]string{
		"pipeline": pipelineFields, "destination": destinationFields(), "publish": publishFields,
		"paths": pathsFields, "markdown": markdownFields, "links": linksFields,
		"retention": retentionFields, "prune": pruneFields,
		"notification": notificationFields, "webhook": webhookFields,
		"headerRule": headerRuleFields, "index": indexFields,
	}
	// Each backend's block: its schema fragment lists exactly the fields
	// its Decode reads (the backend's own tests check its patterns).
	for _, b := range registry.All() {
		if len(b.Fields) > 0 {
			blocks[b.Name] = b.Fields
		}
	}
	for def, fields := range blocks {
		d, ok := doc.Defs[def]
		if !ok {
			t.Errorf("$defs.%s is missing", def)
			continue
		}
		if got := keys(d.Properties); !slices.Equal(got, sorted(fields)) {
			t.Errorf("$defs.%s: schema fields %v, decoder fields %v", def, got, sorted(fields))
		}
		if d.AdditionalProperties == nil || *d.AdditionalProperties {
			t.Errorf("$defs.%s: additionalProperties must be false", def)
		}
		for name, raw := range d.Properties {
			if !bytes.Contains(raw, []byte(`"description"`)) && !bytes.Contains(raw, []byte(`"$ref"`)) {
				t.Errorf("$defs.%s.%s has no description", def, name)
			}
		}
	}

	text := string(Schema())
	for _, want := range []string{
		jsonString(t, enumOf(registry.Names())), jsonString(t, enumOf(workflows)),
		jsonString(t, enumOf(sources)), jsonString(t, enumOf(events)), jsonString(t, enumOf(missingModes)),
		jsonString(t, slugRE.String()), jsonString(t, envNameRE.String()),
	} {
		if !strings.Contains(compact(t, text), want) {
			t.Errorf("schema.json lacks %s", want)
		}
	}
	for _, name := range legacyDestinationFields {
		if !strings.Contains(compact(t, text), `{"required":["`+name+`"]}`) {
			t.Errorf("schema.json does not reject legacy field %s", name)
		}
	}
	for _, name := range placeholderNames {
		if !strings.Contains(text, name) {
			t.Errorf("schema.json does not know placeholder {%s}", name)
		}
	}
}

type enumOf []string

func jsonString(t *testing.T, v any) string {
	t.Helper()
	if e, ok := v.(enumOf); ok {
		v = map[string]any{"enum": []string(e)}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(strings.TrimPrefix(string(b), "{"), "}")
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// corpus collects configurations from the repository: the examples, the
// configuration blocks of README.md and the YAML files of the end-to-end
// scripts.
func corpus(t *testing.T) (must, others map[string][]byte) {
	t.Helper()
	must, others = map[string][]byte{}, map[string][]byte{}
	examples, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*", "distributor.yaml"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples found (%v)", err)
	}
	for _, f := range examples {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		must[f] = data
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(readme, -1)
	for i, b := range blocks {
		if bytes.Contains(b[1], []byte("pipelines:")) {
			must["README.md#yaml"+string(rune('0'+i))] = b[1]
		}
	}
	scripts, err := filepath.Glob(filepath.Join(repoRoot, "cmd", "distributor", "testdata", "script", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range scripts {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range ar.Files {
			if strings.HasSuffix(file.Name, ".yaml") || strings.HasSuffix(file.Name, ".yml") {
				others[filepath.Base(f)+":"+file.Name] = file.Data
			}
		}
	}
	return must, others
}

// TestSchemaAcceptsValidConfigs: every example must decode and validate, and
// any configuration of the end-to-end scripts that the decoder accepts must
// validate too, so an editor never flags a working configuration.
func TestSchemaAcceptsValidConfigs(t *testing.T) {
	sch := compiledSchema(t)
	must, others := corpus(t)
	for name, data := range must {
		if _, err := Decode(data, "distributor.yaml"); err != nil {
			t.Errorf("%s does not decode: %v", name, err)
		}
		if err := validateYAML(t, sch, data); err != nil {
			t.Errorf("%s does not validate against the schema: %v", name, err)
		}
	}
	checked := 0
	for name, data := range others {
		if _, err := Decode(data, "distributor.yaml"); err != nil {
			continue // a script's deliberately invalid configuration
		}
		checked++
		if err := validateYAML(t, sch, data); err != nil {
			t.Errorf("%s decodes but does not validate against the schema: %v", name, err)
		}
	}
	if checked == 0 {
		t.Errorf("no valid configuration found in the end-to-end scripts")
	}
}

// TestSchemaRejects checks invalid configurations that the schema can
// recognise: each is also refused by Decode.
func TestSchemaRejects(t *testing.T) {
	sch := compiledSchema(t)
	const base = `
pipelines:
  - id: p
    source: bundle
    destinations: [d]
destinations:
  - id: d
`
	local := base + "    backend: local\n    path: www\n"
	for name, doc := range map[string]string{
		"unknown top-level field":     local + "extras: 1\n",
		"empty metrics_file":          local + "metrics_file: \"\"\n",
		"metrics_file placeholder":    local + "metrics_file: \"{pipeline_id}.prom\"\n",
		"misspelled pipeline field":   strings.Replace(local, "source:", "sources:", 1),
		"unknown destination field":   local + "    colour: blue\n",
		"misplaced destination field": local + "    prefix: a/\n",
		"legacy state":                local + "    state: shared_root\n",
		"legacy reconciliation":       local + "    reconciliation: strict\n",
		"legacy takeover":             local + "    takeover: true\n",
		"legacy transfer":             local + "    transfer: atomic\n",
		"no pipelines":                "destinations: []\n",
		"empty pipelines":             "pipelines: []\n",
		"bad pipeline id":             strings.Replace(local, "id: p", "id: Weather", 1),
		"bad backend":                 base + "    backend: ftp\n    path: /x\n",
		"missing backend":             base + "    path: www\n",
		"local without path":          base + "    backend: local\n",
		"local with an sftp block":    local + "    sftp: {host: h, user: u, known_hosts_file: k}\n",
		"s3 without its block":        base + "    backend: s3\n    path: reports\n",
		"s3 with a leading slash":     base + "    backend: s3\n    path: /reports\n    s3: {bucket: reports}\n",
		"s3 with an sftp block":       base + "    backend: s3\n    s3: {bucket: reports}\n    sftp: {host: h, user: u, known_hosts_file: k}\n",
		"sftp without its block":      base + "    backend: sftp\n    path: /srv\n",
		"sftp relative path":          base + "    backend: sftp\n    path: srv\n    sftp: {host: h, user: u, known_hosts_file: k}\n",
		"sftp without known_hosts":    base + "    backend: sftp\n    path: /srv\n    sftp: {host: h, user: u}\n",
		"sftp port out of range":      base + "    backend: sftp\n    path: /srv\n    sftp: {host: h, user: u, known_hosts_file: k, port: 70000}\n",
		"bad bucket":                  base + "    backend: s3\n    s3: {bucket: Reports_2026}\n",
		"bad workflow":                local + "    workflow: mirror\n",
		"bad publish.source":          local + "    publish: {source: everything}\n",
		"html not a boolean":          local + "    publish: {html: yes please}\n",
		"prefix without slash":        local + "    paths: {prefix: tomorrow}\n",
		"unknown placeholder":         local + "    paths: {prefix: \"{date}/\"}\n",
		"bad base_url":                local + "    links: {base_url: \"ftp://example.com/\"}\n",
		"bad links.missing":           local + "    links: {missing: ignore}\n",
		"bad duration":                local + "    retention: {prune: {older_than: 30days}}\n",
		"prune without older_than":    local + "    retention: {prune: {keep_min: 3}}\n",
		"negative keep_min":           local + "    retention: {prune: {older_than: 1d, keep_min: -1}}\n",
		"notification without on":     local + "notifications:\n  - id: ops\n    webhook: {url: \"https://h.example.com/\"}\n",
		"bad event":                   local + "notifications:\n  - id: ops\n    webhook: {url: \"https://h.example.com/\"}\n    on: [done]\n",
		"url outside webhook":         local + "notifications:\n  - id: ops\n    url: \"https://h.example.com/\"\n    on: [failed]\n",
		"bad secret_env":              local + "notifications:\n  - id: ops\n    webhook: {url: \"https://h.example.com/\", secret_env: $SECRET}\n    on: [failed]\n",
		"webhook not http":            local + "notifications:\n  - id: ops\n    webhook: {url: \"mailto:ops@example.com\"}\n    on: [failed]\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode([]byte(doc), "distributor.yaml"); err == nil {
				t.Errorf("Decode accepts it: the test case is wrong\n%s", doc)
			}
			if err := validateYAML(t, sch, []byte(doc)); err == nil {
				t.Errorf("the schema accepts it\n%s", doc)
			}
		})
	}
	// The base itself is valid, so each case fails for its own reason.
	if err := validateYAML(t, sch, []byte(local)); err != nil {
		t.Fatalf("base configuration: %v", err)
	}
}
