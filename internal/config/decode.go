package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/distributor-dev/distributor/internal/cleanpath"
	"go.yaml.in/yaml/v3"
)

// Load reads the configuration file at path and decodes it with Decode.
// Messages name the file as path was given; Config.File is absolute. A file
// that cannot be read gives a wrapped *fs.PathError; an invalid one an *Error.
func Load(path string) (*Config, error) {
	return LoadEnv(path, os.Getenv)
}

// LoadEnv is Load with the environment that ${VAR} references in the
// configuration read from (see DecodeEnv).
func LoadEnv(path string, getenv func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return DecodeEnv(data, path, getenv)
}

// Decode parses and validates a configuration. file is the path of the
// configuration file: messages name it as given, and relative local paths
// resolve against its directory (the working directory when file is "").
// Config.File is set to file made absolute ("" when file is "").
//
// Decoding is strict: unknown fields, repeated fields, wrong YAML types and
// invalid values are all reported, each with its line and field path, in one
// *Error (use errors.As). No partial Config is returned with an error.
func Decode(data []byte, file string) (*Config, error) {
	return DecodeEnv(data, file, os.Getenv)
}

// DecodeEnv is Decode with the environment that ${VAR} references in string
// values read from: each is replaced by the variable's value before the
// value is checked, "$$" is a literal "$", and an unset or empty variable
// is a problem naming it, the line and the field. Ids, references and
// secret_env are never expanded.
func DecodeEnv(data []byte, file string, getenv func(string) string) (*Config, error) {
	d := &decoder{file: file, budget: nodeBudget, getenv: getenv}
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", file, err)
		}
		d.abs, d.dir = abs, filepath.Dir(abs)
	} else {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("config: resolving relative paths: %w", err)
		}
		d.dir = wd
	}
	cfg := d.document(data)
	if d.exhausted {
		d.probs = []Problem{{Field: "", Msg: "document too large or too many alias references"}}
	}
	if len(d.probs) > 0 {
		sort.SliceStable(d.probs, func(i, j int) bool { return d.probs[i].Line < d.probs[j].Line })
		return nil, &Error{File: file, Problems: d.probs}
	}
	cfg.File = d.abs
	return cfg, nil
}

// nodeBudget bounds the YAML nodes visited while decoding, so that aliases
// cannot make decoding arbitrarily slow.
const nodeBudget = 1 << 20

var (
	rootFields         = []string{"pipelines", "destinations", "notifications"}
	pipelineFields     = []string{"id", "source", "destinations"}
	destinationFields  = []string{"id", "backend", "path", "workflow", "max_deletes", "single_writer", "publish", "paths", "markdown", "links", "headers", "index", "retention", "sftp", "s3"}
	publishFields      = []string{"html", "source", "include", "exclude"}
	pathsFields        = []string{"prefix", "rename"}
	markdownFields     = []string{"template", "raw_html"}
	linksFields        = []string{"base_url", "pretty"}
	retentionFields    = []string{"prune"}
	pruneFields        = []string{"older_than", "keep_min"}
	sftpFields         = []string{"host", "port", "user", "identity_file", "known_hosts_file", "dial_timeout", "keepalive_interval", "keepalive_timeout"}
	s3Fields           = []string{"bucket", "region", "endpoint", "path_style", "dial_timeout", "response_timeout", "idle_timeout"}
	notificationFields = []string{"id", "webhook", "on"}
	webhookFields      = []string{"url", "secret_env"}

	backends  = []string{BackendLocal, BackendSFTP, BackendS3}
	workflows = []string{WorkflowAdditive, WorkflowReplacement}
	sources   = []string{SourceAll, SourceAssets, SourceNone}
	events    = []string{EventPublished, EventSkipped, EventFailed}
)

// legacyDestinationFields were part of earlier destination-state designs.
var legacyDestinationFields = []string{"state", "reconciliation", "takeover", "transfer"}

// misplacedDestinationFields maps a field written directly in a destination
// to the block it belongs in.
var misplacedDestinationFields = map[string]string{
	"html": "publish", "prefix": "paths", "rename": "paths",
	"template": "markdown", "raw_html": "markdown",
	"base_url": "links", "pretty": "links",
	"prune": "retention", "older_than": "retention.prune", "keep_min": "retention.prune",
	"host": "sftp", "port": "sftp", "user": "sftp", "identity_file": "sftp", "known_hosts_file": "sftp",
	"bucket": "s3", "region": "s3", "endpoint": "s3", "path_style": "s3",
}

// The value patterns (also in schema.json), matched by hand-written
// checks (see patterns.go): compiling them as regular expressions cost
// every start of the program about 1.5 ms.
var (
	slugRE    = charPattern{expr: `^[a-z0-9][a-z0-9._-]{0,63}$`, first: lowerDigit, rest: lowerDigit + "._-", min: 0, max: 63}
	envNameRE = charPattern{expr: `^[A-Za-z_][A-Za-z0-9_]*$`, first: letters + "_", rest: letters + digits + "_", min: 0, max: -1}
	bucketRE  = charPattern{expr: `^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`, first: lowerDigit, rest: lowerDigit + ".-", last: lowerDigit, min: 1, max: 61}
	regionRE  = charPattern{expr: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`, first: letters + digits, rest: letters + digits + "_.-", min: 0, max: 63}
	// yamlErrRE is compiled when a YAML error needs it.
	yamlErrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })
)

type decoder struct {
	file string // as given, for messages
	abs  string // absolute config path, or ""
	dir  string // base for relative local paths

	home    string
	homeErr error
	homeSet bool

	// getenv reads the variables ${VAR} references name.
	getenv func(string) string

	budget    int
	exhausted bool
	probs     []Problem
}

func (d *decoder) add(line int, field, format string, args ...any) {
	d.probs = append(d.probs, Problem{Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// resolve follows aliases and charges the node budget. It returns nil once
// the budget is spent.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > 100 {
			d.exhausted = true
			return nil
		}
		n = n.Alias
	}
	d.budget--
	if d.budget < 0 {
		d.exhausted = true
		return nil
	}
	return n
}

// yamlError reports a YAML syntax error at the line where it occurs (see
// syntaxErrorLine), not the parser's.
func (d *decoder) yamlError(data []byte, err error) {
	line, msg := yamlProblem(err)
	if l := syntaxErrorLine(data, msg); l > 0 {
		line = l
	}
	d.add(line, "", "invalid YAML: %s", msg)
}

func (d *decoder) document(data []byte) *Config {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.add(0, "pipelines", "at least one pipeline is required (the file is empty)")
		} else {
			d.yamlError(data, err)
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			d.yamlError(data, err)
		} else {
			d.add(extra.Line, "", "a second YAML document (after ---): the configuration must be a single document")
		}
		return nil
	}
	var root *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		root = d.resolve(doc.Content[0])
	}
	if root == nil || isNull(root) {
		d.add(doc.Line, "pipelines", "at least one pipeline is required (the file is empty)")
		return nil
	}
	if root.Kind != yaml.MappingNode {
		d.add(root.Line, "", "the configuration must be a mapping with pipelines, destinations and notifications, not %s", describe(root))
		return nil
	}
	if !d.expandEnv(root) {
		return nil
	}
	o := d.object(root, "", rootFields, nil)
	cfg := &Config{}

	// Destinations first, so that pipelines can check their references.
	destLines := map[string]int{}
	var destIDs []string
	if items, _, ok := d.list(o, "destinations", false); ok {
		for i, it := range items {
			if dst, ok := d.destination(it, fmt.Sprintf("destinations[%d]", i), destLines); ok {
				cfg.Destinations = append(cfg.Destinations, dst)
				if dst.ID != "" {
					destIDs = append(destIDs, dst.ID)
				}
			}
		}
	}

	d.indexOwners(cfg.Destinations)

	items, n, ok := d.list(o, "pipelines", false)
	switch {
	case n == nil:
		d.add(root.Line, "pipelines", "at least one pipeline is required")
	case ok && len(items) == 0:
		d.add(n.Line, "pipelines", "at least one pipeline is required")
	}
	pipeLines := map[string]int{}
	for i, it := range items {
		if p, ok := d.pipeline(it, fmt.Sprintf("pipelines[%d]", i), pipeLines, destLines, destIDs); ok {
			cfg.Pipelines = append(cfg.Pipelines, p)
		}
	}

	if items, _, ok := d.list(o, "notifications", false); ok {
		noteLines := map[string]int{}
		for i, it := range items {
			if nt, ok := d.notification(it, fmt.Sprintf("notifications[%d]", i), noteLines); ok {
				cfg.Notifications = append(cfg.Notifications, nt)
			}
		}
	}
	return cfg
}

// ---- generic node access ----------------------------------------------------

type entry struct{ key, val *yaml.Node }

// object is a decoded YAML mapping whose keys have been checked against the
// known fields.
type object struct {
	node   *yaml.Node
	path   string
	line   int // where the object starts: its parent key's line for a nested block
	fields map[string]entry
	// suggested holds known fields offered for a misspelled one; a missing
	// suggested field is not reported again as required.
	suggested map[string]bool
}

func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// describe names a node's YAML type for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		case "!!int", "!!float":
			return "a number (" + n.Value + ")"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return fmt.Sprintf("the string %q", v)
	}
	return "an unexpected YAML node"
}

// object checks that n is a mapping and indexes its fields, reporting
// non-string keys, merge keys, repeated fields and unknown fields (with a
// suggestion). hint may supply a specific message for an unknown name. It
// returns nil when n is not a mapping.
func (d *decoder) object(n *yaml.Node, field string, known []string, hint func(string) string) *object {
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, field, "must be a mapping, not %s", describe(n))
		return nil
	}
	o := &object{node: n, path: field, line: n.Line, fields: map[string]entry{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.resolve(n.Content[i])
		if k == nil {
			return o
		}
		if k.Kind != yaml.ScalarNode {
			d.add(k.Line, field, "keys must be field names, not %s", describe(k))
			continue
		}
		name := k.Value
		if name == "<<" && k.Tag != "!!str" {
			d.add(k.Line, field, "merge keys (<<) are not supported; write the fields out")
			continue
		}
		if !slices.Contains(known, name) {
			msg := ""
			if hint != nil {
				msg = hint(name)
			}
			if msg == "" {
				msg = fmt.Sprintf("unknown field %q", name)
				if s := closest(name, known); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
					if o.suggested == nil {
						o.suggested = map[string]bool{}
					}
					o.suggested[s] = true
				}
			}
			d.add(k.Line, field, "%s", msg)
			continue
		}
		if prev, dup := o.fields[name]; dup {
			d.add(k.Line, join(field, name), "set twice (first at line %d)", prev.key.Line)
			continue
		}
		o.fields[name] = entry{key: k, val: n.Content[i+1]}
	}
	return o
}

// value returns the value of field name, or nil when it is absent or null.
func (d *decoder) value(o *object, name string) *yaml.Node {
	if o == nil {
		return nil
	}
	e, ok := o.fields[name]
	if !ok {
		return nil
	}
	v := d.resolve(e.val)
	if v == nil || isNull(v) {
		return nil
	}
	return v
}

// keyLine is the line of field name's key, or of the object itself.
func (o *object) keyLine(name string) int {
	if e, ok := o.fields[name]; ok {
		return e.key.Line
	}
	return o.line
}

func (d *decoder) required(o *object, name, what string) {
	if o.suggested[name] {
		return // already reported as a misspelling
	}
	msg := "is required"
	if what != "" {
		msg += " (" + what + ")"
	}
	d.add(o.line, join(o.path, name), "%s", msg)
}

// str returns field name as a string. n is nil when the field is absent or
// null (reported when required); ok is false unless n is a string scalar (a
// wrong type is reported). Any YAML scalar counts as a string, with its
// text as written.
func (d *decoder) str(o *object, name string, required bool) (s string, n *yaml.Node, ok bool) {
	n = d.value(o, name)
	if n == nil {
		if required && o != nil {
			d.required(o, name, "")
		}
		return "", nil, false
	}
	if n.Kind != yaml.ScalarNode {
		d.add(n.Line, join(o.path, name), "must be a string, not %s", describe(n))
		return "", n, false
	}
	return n.Value, n, true
}

// boolean returns field name as a boolean, def when absent.
func (d *decoder) boolean(o *object, name string, def bool) bool {
	n := d.value(o, name)
	if n == nil {
		return def
	}
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		d.add(n.Line, join(o.path, name), "must be true or false, not %s", describe(n))
		return def
	}
	return b
}

// integer returns field name as an integer; n is nil when absent and ok false
// unless it is a valid integer.
func (d *decoder) integer(o *object, name string) (v int64, n *yaml.Node, ok bool) {
	n = d.value(o, name)
	if n == nil {
		return 0, nil, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.add(n.Line, join(o.path, name), "must be a whole number, not %s", describe(n))
		return 0, n, false
	}
	if err := n.Decode(&v); err != nil {
		d.add(n.Line, join(o.path, name), "%s is out of range", n.Value)
		return 0, n, false
	}
	return v, n, true
}

// list returns field name's items (aliases resolved). n is nil when absent
// or null; ok is false unless it is a list.
func (d *decoder) list(o *object, name string, required bool) (items []*yaml.Node, n *yaml.Node, ok bool) {
	n = d.value(o, name)
	if n == nil {
		if required && o != nil {
			d.required(o, name, "")
		}
		return nil, nil, false
	}
	if n.Kind != yaml.SequenceNode {
		msg := fmt.Sprintf("must be a list, not %s", describe(n))
		if n.Kind == yaml.ScalarNode {
			msg += fmt.Sprintf(" (write [%s])", n.Value)
		}
		d.add(n.Line, join(o.path, name), "%s", msg)
		return nil, n, false
	}
	for _, c := range n.Content {
		if c = d.resolve(c); c != nil {
			items = append(items, c)
		}
	}
	return items, n, true
}

// sub decodes the nested mapping in field name; nil when absent, null or not
// a mapping.
func (d *decoder) sub(o *object, name string, known []string, hint func(string) string) *object {
	n := d.value(o, name)
	if n == nil {
		return nil
	}
	so := d.object(n, join(o.path, name), known, hint)
	if so != nil {
		so.line = o.keyLine(name)
	}
	return so
}

// itemString returns a list item as a string, reporting other types.
func (d *decoder) itemString(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.add(n.Line, field, "must be a string, not %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// ---- value checks -------------------------------------------------------------

func (d *decoder) slug(s string, n *yaml.Node, field string) bool {
	if !slugRE.MatchString(s) {
		d.add(n.Line, field, "%q is not a valid id: use 1 to 64 characters of a-z, 0-9, \".\", \"_\" and \"-\", starting with a letter or digit", s)
		return false
	}
	return true
}

// unique records id in seen, reporting a repeat.
func (d *decoder) unique(seen map[string]int, id string, n *yaml.Node, field, kind string) {
	if id == "" {
		return
	}
	if first, dup := seen[id]; dup {
		d.add(n.Line, field, "duplicate %s id %q (first defined at line %d)", kind, id, first)
		return
	}
	seen[id] = n.Line
}

// oneOf checks s against allowed values, suggesting the closest.
func (d *decoder) oneOf(s string, n *yaml.Node, field string, allowed []string) bool {
	if slices.Contains(allowed, s) {
		return true
	}
	msg := fmt.Sprintf("%q is not one of %s", s, strings.Join(allowed, ", "))
	if c := closest(s, allowed); c != "" {
		msg += fmt.Sprintf("; did you mean %q?", c)
	}
	d.add(n.Line, field, "%s", msg)
	return false
}

// noPlaceholder rejects placeholders in fields that do not expand them.
func (d *decoder) noPlaceholder(s string, n *yaml.Node, field string) bool {
	for _, name := range placeholderNames {
		if strings.Contains(s, "{"+name+"}") {
			d.add(n.Line, field, "placeholder {%s} is not allowed here: placeholders are only allowed in path and paths.prefix", name)
			return false
		}
	}
	return true
}

// template checks the placeholder syntax of a path or prefix.
func (d *decoder) template(s string, n *yaml.Node, field string) bool {
	if _, err := parseTemplate(s); err != nil {
		d.add(n.Line, field, "%v", err)
		return false
	}
	return true
}

func (d *decoder) homeDir() (string, error) {
	if !d.homeSet {
		d.home, d.homeErr = os.UserHomeDir()
		d.homeSet = true
	}
	return d.home, d.homeErr
}

// localPath resolves a local file path: "~" and "~/..." expand to the home
// directory, relative paths join the config file's directory, and the result
// is cleaned. Placeholders pass through unchanged.
func (d *decoder) localPath(s string, n *yaml.Node, field string) (string, bool) {
	if s == "" {
		d.add(n.Line, field, "must not be empty")
		return "", false
	}
	if strings.IndexByte(s, 0) >= 0 {
		d.add(n.Line, field, "must not contain a NUL byte")
		return "", false
	}
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		home, err := d.homeDir()
		if err != nil {
			d.add(n.Line, field, "cannot expand ~: %v", err)
			return "", false
		}
		s = filepath.Join(home, s[1:])
	case strings.HasPrefix(s, "~"):
		d.add(n.Line, field, "%q: only ~/ (the home directory of the user running distributor) is expanded, not ~user", s)
		return "", false
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(d.dir, s)
	}
	return filepath.Clean(s), true
}

// httpURL checks s is an absolute http(s) URL with a host.
func httpURL(s string) (*url.URL, error) {
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return nil, fmt.Errorf("%q must not contain spaces or control characters", s)
	}
	u, err := url.Parse(s)
	if !strings.Contains(s, "://") {
		return nil, fmt.Errorf("%q must be an absolute http:// or https:// URL", s)
	}
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid URL", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Opaque != "" {
		return nil, fmt.Errorf("%q must be an absolute http:// or https:// URL", s)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%q has no host", s)
	}
	return u, nil
}

// ---- pipelines -----------------------------------------------------------------

func (d *decoder) pipeline(n *yaml.Node, field string, seen, destLines map[string]int, destIDs []string) (Pipeline, bool) {
	o := d.object(n, field, pipelineFields, nil)
	if o == nil {
		return Pipeline{}, false
	}
	p := Pipeline{Line: n.Line}
	if s, v, ok := d.str(o, "id", true); ok {
		d.slug(s, v, join(field, "id"))
		d.unique(seen, s, v, join(field, "id"), "pipeline")
		p.ID = s
	}
	if s, v, ok := d.str(o, "source", true); ok && d.noPlaceholder(s, v, join(field, "source")) {
		p.Source, _ = d.localPath(s, v, join(field, "source"))
	}
	items, v, ok := d.list(o, "destinations", false)
	switch {
	case v == nil:
		d.required(o, "destinations", "a list of destination ids")
	case ok && len(items) == 0:
		d.add(v.Line, join(field, "destinations"), "at least one destination id is required")
	}
	inPipeline := map[string]int{}
	for i, it := range items {
		f := fmt.Sprintf("%s.destinations[%d]", field, i)
		id, ok := d.itemString(it, f)
		if !ok {
			continue
		}
		if first, dup := inPipeline[id]; dup {
			d.add(it.Line, f, "destination %q is listed twice (first at line %d)", id, first)
			continue
		}
		inPipeline[id] = it.Line
		if _, ok := destLines[id]; !ok {
			msg := fmt.Sprintf("unknown destination %q", id)
			if c := closest(id, destIDs); c != "" {
				msg += fmt.Sprintf("; did you mean %q?", c)
			} else if len(destIDs) == 0 {
				msg += " (no destinations are defined)"
			}
			d.add(it.Line, f, "%s", msg)
		}
		p.Destinations = append(p.Destinations, id)
	}
	return p, true
}

// ---- destinations -------------------------------------------------------------

func destinationHint(name string) string {
	if slices.Contains(legacyDestinationFields, name) {
		return fmt.Sprintf("field %q is no longer supported: ownership is recorded in the catalog; use workflow: additive or workflow: replacement", name)
	}
	if block, ok := misplacedDestinationFields[name]; ok {
		return fmt.Sprintf("unknown field %q; it belongs in the %s block (%s.%s)", name, block, block, name)
	}
	return ""
}

func (d *decoder) destination(n *yaml.Node, field string, seen map[string]int) (Destination, bool) {
	o := d.object(n, field, destinationFields, destinationHint)
	if o == nil {
		return Destination{}, false
	}
	dst := Destination{Line: n.Line}
	if s, v, ok := d.str(o, "id", true); ok {
		d.slug(s, v, join(field, "id"))
		d.unique(seen, s, v, join(field, "id"), "destination")
		dst.ID = s
	}

	backend, backendNode, ok := d.str(o, "backend", false)
	if backendNode == nil {
		d.required(o, "backend", "local, sftp or s3")
	}
	if ok && !d.oneOf(backend, backendNode, join(field, "backend"), backends) {
		ok = false
	}
	if !ok {
		backend = ""
	}
	dst.Backend = backend

	d.destinationPath(o, &dst)

	dst.Workflow = WorkflowAdditive
	if s, v, ok := d.str(o, "workflow", false); ok && d.oneOf(s, v, join(field, "workflow"), workflows) {
		dst.Workflow = s
	}

	if n, v, ok := d.integer(o, "max_deletes"); ok {
		if n < 0 {
			d.add(v.Line, join(field, "max_deletes"), "must be 0 or more, not %d", n)
		} else {
			m := int(n)
			dst.MaxDeletes = &m
		}
	}

	dst.SingleWriter = d.boolean(o, "single_writer", false)

	dst.Publish = Publish{HTML: true, Source: SourceAssets}
	if po := d.sub(o, "publish", publishFields, nil); po != nil {
		dst.Publish.HTML = d.boolean(po, "html", true)
		if s, v, ok := d.str(po, "source", false); ok && d.oneOf(s, v, join(po.path, "source"), sources) {
			dst.Publish.Source = s
		}
		d.publishFilters(po, &dst.Publish)
	}

	if po := d.sub(o, "paths", pathsFields, nil); po != nil {
		dst.Paths = d.paths(po)
	}

	if mo := d.sub(o, "markdown", markdownFields, nil); mo != nil {
		if s, v, ok := d.str(mo, "template", false); ok && s != "" && d.noPlaceholder(s, v, join(mo.path, "template")) {
			dst.Markdown.Template, _ = d.localPath(s, v, join(mo.path, "template"))
		}
		dst.Markdown.RawHTML = d.boolean(mo, "raw_html", false)
	}

	if lo := d.sub(o, "links", linksFields, nil); lo != nil {
		if s, v, ok := d.str(lo, "base_url", false); ok && s != "" {
			f := join(lo.path, "base_url")
			if u, err := httpURL(s); err != nil {
				d.add(v.Line, f, "%v", err)
			} else if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
				d.add(v.Line, f, "%q must not have a query or fragment", s)
			} else if u.User != nil {
				d.add(v.Line, f, "%q must not contain credentials", s)
			} else if d.noPlaceholder(s, v, f) {
				if !strings.HasSuffix(s, "/") {
					s += "/"
				}
				dst.Links.BaseURL = s
			}
		}
		dst.Links.Pretty = d.boolean(lo, "pretty", false)
	}

	dst.Headers = d.headers(o, backend)
	dst.Index = d.index(o, dst.Links)

	if ro := d.sub(o, "retention", retentionFields, nil); ro != nil {
		dst.Retention = &Retention{}
		if po := d.sub(ro, "prune", pruneFields, nil); po != nil {
			dst.Retention.Prune = d.prune(po)
		}
	}

	d.backendBlock(o, backend, backendNode, BackendSFTP, "host, user and known_hosts_file", func(b *object) {
		dst.SFTP = d.sftp(b)
	})
	d.backendBlock(o, backend, backendNode, BackendS3, "bucket", func(b *object) {
		dst.S3 = d.s3(b)
	})
	return dst, true
}

// backendBlock checks that the block named like a backend is present exactly
// when that backend is chosen, and decodes it with fn when present.
func (d *decoder) backendBlock(o *object, backend string, backendNode *yaml.Node, name, needs string, fn func(*object)) {
	_, present := o.fields[name]
	f := join(o.path, name)
	switch {
	case backend == name && !present:
		d.add(backendNode.Line, f, "backend %s needs an %s block (with %s)", name, name, needs)
		return
	case backend != "" && backend != name && present:
		d.add(o.keyLine(name), f, "only allowed with backend: %s (this destination's backend is %s)", name, backend)
		return
	case !present:
		return
	}
	if d.value(o, name) == nil {
		if backend == name {
			d.add(o.keyLine(name), f, "is empty (it needs %s)", needs)
		}
		return
	}
	if b := d.sub(o, name, fieldsOf(name), nil); b != nil {
		fn(b)
	}
}

func fieldsOf(block string) []string {
	if block == BackendSFTP {
		return sftpFields
	}
	return s3Fields
}

// destinationPath checks and resolves dst's path according to its backend.
func (d *decoder) destinationPath(o *object, dst *Destination) {
	f := join(o.path, "path")
	needed := dst.Backend == BackendLocal || dst.Backend == BackendSFTP
	s, v, ok := d.str(o, "path", needed)
	if !ok || !d.template(s, v, f) {
		return
	}
	switch dst.Backend {
	case BackendLocal:
		dst.Path, _ = d.localPath(s, v, f)
	case BackendSFTP:
		switch {
		case s == "":
			d.add(v.Line, f, "must not be empty")
		case !strings.HasPrefix(s, "/"):
			d.add(v.Line, f, "%q must be an absolute path on the server (starting with /)", s)
		case strings.ContainsAny(s, "\\\x00"):
			d.add(v.Line, f, "%q must not contain a backslash or NUL byte", s)
		default:
			dst.Path = path.Clean(s)
		}
	case BackendS3:
		if strings.HasPrefix(s, "/") {
			d.add(v.Line, f, "%q must be a key prefix without a leading /", s)
			return
		}
		s = strings.TrimSuffix(s, "/")
		if s != "" {
			if err := cleanpath.Check(s); err != nil {
				d.add(v.Line, f, "key prefix %q is not clean: %s", s, reason(err))
				return
			}
		}
		dst.Path = s
	default:
		dst.Path = s // backend invalid: already reported
	}
}

func reason(err error) string {
	var ce *cleanpath.Error
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return err.Error()
}

func (d *decoder) paths(o *object) Paths {
	var p Paths
	if s, v, ok := d.str(o, "prefix", false); ok && s != "" {
		f := join(o.path, "prefix")
		if d.template(s, v, f) {
			// Any clean output path appended to the prefix must stay clean;
			// checking with a one-letter name covers every rule but the
			// reserved-name one, which planning checks on the final paths.
			if !strings.HasSuffix(s, "/") {
				// A prefix is a folder: "tomorrow" silently producing
				// "tomorrowindex.html" surprises everyone.
				d.add(v.Line, f, "%q must end with \"/\" (it names a folder: write %q)", s, s+"/")
			} else if err := cleanpath.CheckUnreserved(s + "x"); err != nil {
				d.add(v.Line, f, "%q would make unclean output paths (%q %s)", s, s+"x", reason(err))
			} else {
				p.Prefix = s
			}
		}
	}
	n := d.value(o, "rename")
	if n == nil {
		return p
	}
	f := join(o.path, "rename")
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, f, "must be a mapping of source path to output path, not %s", describe(n))
		return p
	}
	keys := map[string]int{}
	targets := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i]), d.resolve(n.Content[i+1])
		if k == nil || v == nil {
			return p
		}
		if k.Kind != yaml.ScalarNode || isNull(k) {
			d.add(k.Line, f, "keys must be source paths, not %s", describe(k))
			continue
		}
		ef := fmt.Sprintf("%s[%q]", f, k.Value)
		if first, dup := keys[k.Value]; dup {
			d.add(k.Line, ef, "source path renamed twice (first at line %d)", first)
			continue
		}
		keys[k.Value] = k.Line
		okKey := true
		if err := cleanpath.CheckUnreserved(k.Value); err != nil {
			d.add(k.Line, ef, "source path %q is not clean: %s", k.Value, reason(err))
			okKey = false
		}
		if v.Kind != yaml.ScalarNode || isNull(v) {
			d.add(v.Line, ef, "must be an output path, not %s", describe(v))
			continue
		}
		if err := cleanpath.CheckUnreserved(v.Value); err != nil {
			d.add(v.Line, ef, "output path %q is not clean: %s", v.Value, reason(err))
			continue
		}
		if !d.noPlaceholder(k.Value, k, ef) || !d.noPlaceholder(v.Value, v, ef) {
			continue
		}
		if first, dup := targets[v.Value]; dup {
			d.add(v.Line, ef, "output path %q is already the target of another rename (line %d)", v.Value, first)
			continue
		}
		targets[v.Value] = v.Line
		if okKey {
			if p.Rename == nil {
				p.Rename = map[string]string{}
			}
			p.Rename[k.Value] = v.Value
		}
	}
	return p
}

func (d *decoder) prune(o *object) *Prune {
	p := &Prune{}
	if s, v, ok := d.str(o, "older_than", true); ok {
		f := join(o.path, "older_than")
		dur, err := ParseDuration(s)
		switch {
		case err != nil:
			d.add(v.Line, f, "%v", err)
		case dur <= 0:
			d.add(v.Line, f, "must be greater than zero")
		default:
			p.OlderThan = dur
		}
	}
	if k, v, ok := d.integer(o, "keep_min"); ok {
		if k < 0 {
			d.add(v.Line, join(o.path, "keep_min"), "must be 0 or more, not %d", k)
		} else if k > 1<<31-1 {
			d.add(v.Line, join(o.path, "keep_min"), "%d is too large", k)
		} else {
			p.KeepMin = int(k)
		}
	}
	return p
}

func (d *decoder) sftp(o *object) *SFTP {
	s := &SFTP{Port: 22}
	if h, v, ok := d.str(o, "host", true); ok {
		f := join(o.path, "host")
		host := h
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		}
		switch {
		case host == "":
			d.add(v.Line, f, "must not be empty")
		case strings.IndexFunc(host, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
			d.add(v.Line, f, "%q must not contain spaces or control characters", h)
		case strings.Contains(host, "/"):
			d.add(v.Line, f, "%q must be a host name or IP address, not a URL or path", h)
		case strings.Contains(host, "@"):
			d.add(v.Line, f, "%q must be a host name or IP address; put the user name in sftp.user", h)
		case strings.Contains(host, ":") && net.ParseIP(host) == nil:
			d.add(v.Line, f, "%q must be a host name or IP address; put the port in sftp.port", h)
		default:
			s.Host = host
		}
	}
	if p, v, ok := d.integer(o, "port"); ok {
		if p < 1 || p > 65535 {
			d.add(v.Line, join(o.path, "port"), "%d is not a TCP port (1 to 65535)", p)
		} else {
			s.Port = int(p)
		}
	}
	if u, v, ok := d.str(o, "user", true); ok {
		if u == "" || strings.IndexFunc(u, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
			d.add(v.Line, join(o.path, "user"), "%q is not a user name", u)
		} else {
			s.User = u
		}
	}
	if p, v, ok := d.str(o, "identity_file", false); ok && p != "" {
		f := join(o.path, "identity_file")
		if d.noPlaceholder(p, v, f) {
			s.IdentityFile, _ = d.localPath(p, v, f)
		}
	}
	if p, v, ok := d.str(o, "known_hosts_file", false); v == nil {
		d.required(o, "known_hosts_file", "host keys are always verified")
	} else if ok {
		f := join(o.path, "known_hosts_file")
		if d.noPlaceholder(p, v, f) {
			s.KnownHostsFile, _ = d.localPath(p, v, f)
		}
	}
	s.DialTimeout = d.timeout(o, "dial_timeout")
	s.KeepaliveInterval = d.timeout(o, "keepalive_interval")
	s.KeepaliveTimeout = d.timeout(o, "keepalive_timeout")
	return s
}

// timeout decodes an optional positive duration such as "15s" or "2m"
// (units d, h, m, s, as retention durations); absent is 0, the default.
func (d *decoder) timeout(o *object, name string) time.Duration {
	s, v, ok := d.str(o, name, false)
	if !ok {
		return 0
	}
	dur, err := ParseDuration(s)
	switch {
	case err != nil:
		d.add(v.Line, join(o.path, name), "%v", err)
	case dur <= 0:
		d.add(v.Line, join(o.path, name), "must be greater than zero")
	default:
		return dur
	}
	return 0
}

func (d *decoder) s3(o *object) *S3 {
	s := &S3{}
	if b, v, ok := d.str(o, "bucket", true); ok {
		if !bucketRE.MatchString(b) || strings.Contains(b, "..") || net.ParseIP(b) != nil {
			d.add(v.Line, join(o.path, "bucket"), "%q is not a valid bucket name: use 3 to 63 characters of a-z, 0-9, \".\" and \"-\", starting and ending with a letter or digit", b)
		} else {
			s.Bucket = b
		}
	}
	if r, v, ok := d.str(o, "region", false); ok && r != "" {
		if !regionRE.MatchString(r) {
			d.add(v.Line, join(o.path, "region"), "%q is not a valid region name", r)
		} else {
			s.Region = r
		}
	}
	if e, v, ok := d.str(o, "endpoint", false); ok && e != "" {
		f := join(o.path, "endpoint")
		if u, err := httpURL(e); err != nil {
			d.add(v.Line, f, "%v", err)
		} else if u.User != nil {
			d.add(v.Line, f, "%q must not contain credentials (they come from the AWS credential chain)", e)
		} else if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			d.add(v.Line, f, "%q must not have a query or fragment", e)
		} else {
			s.Endpoint = e
		}
	}
	s.PathStyle = d.boolean(o, "path_style", false)
	s.DialTimeout = d.timeout(o, "dial_timeout")
	s.ResponseTimeout = d.timeout(o, "response_timeout")
	s.IdleTimeout = d.timeout(o, "idle_timeout")
	return s
}

// ---- notifications ------------------------------------------------------------

func notificationHint(name string) string {
	if name == "url" || name == "secret_env" {
		return fmt.Sprintf("unknown field %q; it belongs in the webhook block (webhook.%s)", name, name)
	}
	return ""
}

func (d *decoder) notification(n *yaml.Node, field string, seen map[string]int) (Notification, bool) {
	o := d.object(n, field, notificationFields, notificationHint)
	if o == nil {
		return Notification{}, false
	}
	nt := Notification{Line: n.Line}
	if s, v, ok := d.str(o, "id", true); ok {
		d.slug(s, v, join(field, "id"))
		d.unique(seen, s, v, join(field, "id"), "notification")
		nt.ID = s
	}
	if d.value(o, "webhook") == nil {
		d.required(o, "webhook", "a mapping with url")
	} else if wo := d.sub(o, "webhook", webhookFields, nil); wo != nil {
		if s, v, ok := d.str(wo, "url", true); ok {
			if _, err := httpURL(s); err != nil {
				d.add(v.Line, join(wo.path, "url"), "%v", err)
			} else {
				nt.URL = s
			}
		}
		if s, v, ok := d.str(wo, "secret_env", false); ok {
			f := join(wo.path, "secret_env")
			switch {
			case strings.HasPrefix(s, "$") && envNameRE.MatchString(strings.Trim(s[1:], "{}")):
				d.add(v.Line, f, "%q: write the environment variable's name without $", s)
			case !envNameRE.MatchString(s):
				d.add(v.Line, f, "%q is not an environment variable name (letters, digits and _, not starting with a digit)", s)
			default:
				nt.SecretEnv = s
			}
		}
	}
	items, v, ok := d.list(o, "on", false)
	switch {
	case v == nil:
		d.required(o, "on", "a list of events: published, skipped, failed")
	case ok && len(items) == 0:
		d.add(v.Line, join(field, "on"), "at least one event is required (published, skipped, failed)")
	}
	got := map[string]int{}
	for i, it := range items {
		f := fmt.Sprintf("%s.on[%d]", field, i)
		ev, ok := d.itemString(it, f)
		if !ok || !d.oneOf(ev, it, f, events) {
			continue
		}
		if first, dup := got[ev]; dup {
			d.add(it.Line, f, "event %q is listed twice (first at line %d)", ev, first)
			continue
		}
		got[ev] = it.Line
		nt.On = append(nt.On, ev)
	}
	return nt, true
}
