package config

import (
	"bytes"
	_ "embed"
)

// schemaJSON is the JSON Schema (draft 2020-12) of distributor.yaml. It is
// maintained by hand next to the decoder; schema_test.go checks that both
// know the same fields, enums and patterns and agree on the examples.
//
//go:embed schema.json
var schemaJSON []byte

// Schema returns the JSON Schema (draft 2020-12) of distributor.yaml, for
// editors and linters: every field with its description, enums, patterns
// and defaults; unknown and legacy fields rejected; the sftp and s3 blocks
// required exactly with their backend. What a schema cannot express
// (references between ids, unique ids, rename keys present in the bundle)
// is checked by Decode.
func Schema() []byte {
	return bytes.Clone(schemaJSON)
}
