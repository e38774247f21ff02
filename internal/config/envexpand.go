package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// noEnvFields are the fields whose values are never expanded: ids and the
// references to them, and secret_env, which names a variable itself.
var noEnvFields = map[string]bool{"id": true, "secret_env": true, "destinations[]": true, "on[]": true}

// expandEnv expands ${NAME} in values (not keys, nor noEnvFields) before decoding,
// so "port: ${SFTP_PORT}" decodes as a number; false when there were problems.
func (d *decoder) expandEnv(root *yaml.Node) bool {
	before := len(d.probs)
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, field, key string)
	walk = func(n *yaml.Node, field, key string) {
		for i := 0; n != nil && n.Kind == yaml.AliasNode && i <= 100; i++ {
			n = n.Alias
		}
		if n == nil || seen[n] || d.exhausted {
			return
		}
		seen[n] = true
		d.budget--
		if d.budget < 0 {
			d.exhausted = true
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				walk(n.Content[i+1], join(field, k), k)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, field+"["+strconv.Itoa(i)+"]", key+"[]")
			}
		case yaml.ScalarNode:
			if noEnvFields[key] || !strings.Contains(n.Value, "$") {
				return
			}
			v, err := expandVars(n.Value, d.getenv)
			if err != nil {
				d.add(n.Line, field, "%v", err)
				return
			}
			n.Value = v
			if n.Style&yaml.TaggedStyle == 0 {
				n.Tag = "" // resolve the value's type again: "${PORT}" may be 22
			}
		}
	}
	walk(root, "", "")
	return len(d.probs) == before
}

// expandVars expands ${NAME} in s with getenv; "$$" is a literal "$".
func expandVars(s string, getenv func(string) string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("%q: \"${\" without its \"}\" (write $$ for a literal $)", s)
			}
			name := s[i+2 : i+2+end]
			if !envNameRE.MatchString(name) {
				return "", fmt.Errorf("%q: ${%s} is not a valid environment variable name (write $$ for a literal $)", s, name)
			}
			v := ""
			if getenv != nil {
				v = getenv(name)
			}
			if v == "" {
				return "", fmt.Errorf("${%s} is not set (or empty) in the environment: set it, or write $${%s} for the literal text", name, name)
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
