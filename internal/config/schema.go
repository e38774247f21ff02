package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

// schemaTemplate is distributor.yaml's JSON Schema without its backends, kept
// by hand next to the decoder (schema_test.go checks). Schema fills its @name@
// markers from the registry: names and prose, "@blocks@" (block references),
// "@conditions@" (what each backend requires and forbids), "@backends@" (block schemas).
//
//go:embed schema.json
var schemaTemplate []byte

// Schema returns the JSON Schema (draft 2020-12) of distributor.yaml, for
// editors and linters (id references and uniqueness only Decode checks). It
// panics if the template or a block schema is not JSON; the tests rule it out.
func Schema() []byte {
	backends := registry.All()
	var names, summaries, conds, rules []string
	var refs, defs string
	for _, b := range backends {
		names, summaries = append(names, b.Name), append(summaries, b.Summary)
		conds = append(conds, condition(b, backends)+",")
		if len(b.Fields) == 0 {
			continue
		}
		rule := "the %[1]s block exactly when backend is %[1]s"
		if len(rules) == 0 {
			rule = "The %[1]s block is required exactly when backend is %[1]s"
		}
		rules = append(rules, fmt.Sprintf(rule, b.Name))
		refs += fmt.Sprintf(`,%s:{"$ref":%s}`, quote(b.Name), quote("#/$defs/"+b.Name))
		defs += quote(b.Name) + ":" + compactJSON([]byte(b.Schema)) + ","
	}
	metaTitles, metaNames := backendTitles(true)
	_, otherNames := backendTitles(false)
	text := strings.NewReplacer(
		`["@names@"]`, quote(names),
		`,"@blocks@":true`, refs,
		`"@conditions@",`, strings.Join(conds, ""),
		`"@backends@":true,`, defs,
		"@names@", strings.Join(names, ", "),
		"@summaries@", registry.List(summaries, "or"),
		"@block_rule@", strings.Join(rules, ", ")+".",
		"@paths@", pathKinds(backends),
		"@metadata_titles@", registry.List(metaTitles, "and"),
		"@metadata_names@", registry.List(metaNames, "and"),
		"@other_names@", registry.List(otherNames, "and"),
	).Replace(compactJSON(schemaTemplate))
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(text), "", "  "); err != nil {
		panic(fmt.Sprintf("config: the assembled schema is not JSON: %v", err))
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// condition is the allOf item: what choosing backend b requires and forbids.
func condition(b storage.Backend, all []storage.Backend) string {
	required := []string{}
	path := `{"pattern":"^([^/]|$)"}`
	switch b.Path {
	case storage.PathLocal:
		required, path = append(required, "path"), `{"minLength":1}`
	case storage.PathServer:
		required, path = append(required, "path"), `{"pattern":"^/"}`
	}
	if len(b.Fields) > 0 {
		required = append(required, b.Name)
	}
	props := []string{`"path":` + path}
	for _, o := range all {
		if o.Name != b.Name && len(o.Fields) > 0 {
			props = append(props, quote(o.Name)+":false")
		}
	}
	return fmt.Sprintf(`{"if":{"required":["backend"],"properties":{"backend":{"const":%s}}},"then":{"required":%s,"properties":{%s}}}`,
		quote(b.Name), quote(required), strings.Join(props, ","))
}

// pathKinds says how each backend reads a destination's path.
func pathKinds(all []storage.Backend) string {
	var parts []string
	for kind, format := range []string{
		storage.PathLocal:  "a directory (%s; relative to the configuration file)",
		storage.PathServer: "an absolute server path (%s)",
		storage.PathKey:    "a key prefix inside the bucket without a leading / (%s, may be empty)",
	} {
		var names []string
		for _, b := range all {
			if b.Path == storage.PathKind(kind) {
				names = append(names, b.Name)
			}
		}
		if len(names) > 0 {
			parts = append(parts, fmt.Sprintf(format, strings.Join(names, ", ")))
		}
	}
	if len(parts) > 2 {
		parts[len(parts)-2] += "," // a serial comma: each part has commas of its own
	}
	return registry.List(parts, "or")
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		panic(fmt.Sprintf("config: schema text is not JSON: %v", err))
	}
	return buf.String()
}

// quote is v (a string or strings) as JSON.
func quote(v any) string {
	b, _ := json.Marshal(v) // strings always marshal
	return string(b)
}
