package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/distributor-dev/distributor/internal/storage/registry"
)

// LoadEnv reads the configuration file at path and decodes it with
// DecodeEnv. A file that cannot be read gives a wrapped *fs.PathError.
func LoadEnv(path string, getenv func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return DecodeEnv(data, path, getenv)
}

// DecodeEnv parses and validates a configuration strictly: every problem is
// in one *Error, no partial Config. Messages name file as given; relative
// local paths resolve against its directory (else the working directory).
// ${VAR} in string values reads getenv ("$$" is "$"; unset or empty is a
// problem), except in ids, references and secret_env.
func DecodeEnv(data []byte, file string, getenv func(string) string) (*Config, error) {
	d := &decoder{file: file, budget: nodeBudget, getenv: getenv, homeDir: sync.OnceValues(os.UserHomeDir)}
	var err error
	if file != "" {
		if d.abs, err = filepath.Abs(file); err != nil {
			return nil, fmt.Errorf("config %s: %w", file, err)
		}
		d.dir = filepath.Dir(d.abs)
	} else if d.dir, err = os.Getwd(); err != nil {
		return nil, fmt.Errorf("config: resolving relative paths: %w", err)
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
	rootFields         = []string{"pipelines", "destinations", "notifications", "metrics_file"}
	pipelineFields     = []string{"id", "source", "destinations"}
	publishFields      = []string{"html", "source", "include", "exclude"}
	pathsFields        = []string{"prefix", "rename"}
	markdownFields     = []string{"template", "raw_html"}
	linksFields        = []string{"base_url", "pretty", "missing"}
	retentionFields    = []string{"prune"}
	pruneFields        = []string{"older_than", "keep_min"}
	notificationFields = []string{"id", "webhook", "on"}
	webhookFields      = []string{"url", "secret_env"}

	workflows    = []string{WorkflowAdditive, WorkflowReplacement}
	sources      = []string{SourceAll, SourceAssets, SourceNone}
	missingModes = []string{MissingWarn, MissingFail}
	events       = []string{EventPublished, EventSkipped, EventFailed}
)

// legacyDestinationFields were part of earlier destination-state designs.
var legacyDestinationFields = []string{"state", "reconciliation", "takeover", "transfer"}

// What depends on the linked backends is computed when asked: backends
// register in their packages' initialisers, which may run after this
// package's (see package registry).

// destinationFields are the fixed members and each backend's block; an unlinked
// backend's block is accepted undecoded: the backend's own problem says to link it.
func destinationFields() []string {
	fields := []string{"id", "backend", "path", "workflow", "max_deletes", "single_writer", "publish", "paths",
		"markdown", "links", "headers", "index", "compress", "retention"}
	for _, b := range registry.All() {
		if len(b.Fields) > 0 {
			fields = append(fields, b.Name)
		}
	}
	return append(fields, registry.Unlinked()...)
}

// misplacedDestinationFields maps a field written directly in a destination
// to the blocks it belongs in: a fixed block's, else every backend block's
// with the field, joined by "|" ("s3|gcs").
func misplacedDestinationFields() map[string]string {
	m := map[string]string{
		"html": "publish", "prefix": "paths", "rename": "paths",
		"template": "markdown", "raw_html": "markdown",
		"base_url": "links", "pretty": "links", "missing": "links",
		"prune": "retention", "older_than": "retention.prune", "keep_min": "retention.prune",
	}
	fixed := maps.Clone(m)
	for _, b := range registry.All() {
		for _, f := range b.Fields {
			if _, ok := fixed[f]; !ok {
				m[f] = strings.TrimPrefix(m[f]+"|"+b.Name, "|")
			}
		}
	}
	return m
}

// The value patterns (also in schema.json) are matched by hand: compiling
// them as regular expressions cost every start of the program about 1.5 ms.
var (
	slugRE    = charPattern{expr: `^[a-z0-9][a-z0-9._-]{0,63}$`, first: lowerDigit, rest: lowerDigit + "._-", min: 0, max: 63}
	envNameRE = charPattern{expr: `^[A-Za-z_][A-Za-z0-9_]*$`, first: letters + "_", rest: letters + digits + "_", min: 0, max: -1}
	// yamlErrRE is compiled when a YAML error needs it.
	yamlErrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })
)

type decoder struct {
	file    string                 // as given, for messages
	abs     string                 // absolute config path, or ""
	dir     string                 // base for relative local paths
	homeDir func() (string, error) // os.UserHomeDir, called once
	getenv  func(string) string    // for ${VAR}

	budget    int
	exhausted bool
	probs     []Problem
}

func (d *decoder) add(line int, field, format string, args ...any) {
	d.probs = append(d.probs, Problem{Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// resolve follows aliases and charges the node budget; nil once it is spent.
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
	items, _, _ := d.list(o, "destinations")
	cfg.Destinations = decodeAll(items, "destinations", destLines, d.destination)
	var destIDs []string
	for _, dst := range cfg.Destinations {
		if dst.ID != "" {
			destIDs = append(destIDs, dst.ID)
		}
	}

	d.indexOwners(cfg.Destinations)

	items, n, ok := d.list(o, "pipelines")
	switch {
	case n == nil:
		d.add(root.Line, "pipelines", "at least one pipeline is required")
	case ok && len(items) == 0:
		d.add(n.Line, "pipelines", "at least one pipeline is required")
	}
	cfg.Pipelines = decodeAll(items, "pipelines", map[string]int{}, func(n *yaml.Node, f string, seen map[string]int) (Pipeline, bool) {
		return d.pipeline(n, f, seen, destLines, destIDs)
	})

	items, _, _ = d.list(o, "notifications")
	cfg.Notifications = decodeAll(items, "notifications", map[string]int{}, d.notification)
	if s, v, ok := d.str(o, "metrics_file", false); ok && d.noPlaceholder(s, v, "metrics_file") {
		cfg.MetricsFile, _ = d.localPath(s, v, "metrics_file")
	}
	return cfg
}

// decodeAll decodes items with fn as name[i], seen shared, keeping those fn accepts.
func decodeAll[T any](items []*yaml.Node, name string, seen map[string]int, fn func(*yaml.Node, string, map[string]int) (T, bool)) (out []T) {
	for i, it := range items {
		if v, ok := fn(it, fmt.Sprintf("%s[%d]", name, i), seen); ok {
			out = append(out, v)
		}
	}
	return out
}

func (d *decoder) pipeline(n *yaml.Node, field string, seen, destLines map[string]int, destIDs []string) (Pipeline, bool) {
	o := d.object(n, field, pipelineFields, nil)
	if o == nil {
		return Pipeline{}, false
	}
	p := Pipeline{Line: n.Line, ID: d.id(o, seen, "pipeline")}
	if s, v, ok := d.str(o, "source", true); ok && d.noPlaceholder(s, v, join(field, "source")) {
		p.Source, _ = d.localPath(s, v, join(field, "source"))
	}
	p.Destinations = d.distinct(o, "destinations", "destination", "a list of destination ids", "at least one destination id is required",
		func(id string, it *yaml.Node, f string) bool {
			if _, ok := destLines[id]; !ok {
				msg := fmt.Sprintf("unknown destination %q", id)
				if c := Closest(id, destIDs); c != "" {
					msg += fmt.Sprintf("; did you mean %q?", c)
				} else if len(destIDs) == 0 {
					msg += " (no destinations are defined)"
				}
				d.add(it.Line, f, "%s", msg)
			}
			return true
		})
	return p, true
}

// distinct decodes field name, a required non-empty list of strings listed once
// (required, empty, kind word the messages); check vets non-repeats, false drops.
func (d *decoder) distinct(o *object, name, kind, required, empty string, check func(s string, it *yaml.Node, f string) bool) []string {
	items, v, ok := d.list(o, name)
	switch {
	case v == nil:
		d.required(o, name, required)
	case ok && len(items) == 0:
		d.add(v.Line, join(o.path, name), "%s", empty)
	}
	var out []string
	seen := map[string]int{}
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", join(o.path, name), i)
		s, ok := d.itemString(it, f)
		if !ok {
			continue
		}
		if first, dup := seen[s]; dup {
			d.add(it.Line, f, "%s %q is listed twice (first at line %d)", kind, s, first)
			continue
		}
		if check(s, it, f) {
			seen[s] = it.Line
			out = append(out, s)
		}
	}
	return out
}

// The notifications: webhooks POSTed after each destination.

var misplacedNotificationFields = map[string]string{"url": "webhook", "secret_env": "webhook"}

func notificationHint(name string) string { return misplacedHint(misplacedNotificationFields, name) }

func (d *decoder) notification(n *yaml.Node, field string, seen map[string]int) (Notification, bool) {
	o := d.object(n, field, notificationFields, notificationHint)
	if o == nil {
		return Notification{}, false
	}
	nt := Notification{Line: n.Line, ID: d.id(o, seen, "notification")}
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
	nt.On = d.distinct(o, "on", "event", "a list of events: published, skipped, failed", "at least one event is required (published, skipped, failed)",
		func(ev string, it *yaml.Node, f string) bool { return d.oneOf(ev, it, f, events) })
	return nt, true
}

// Problem is one thing wrong with a configuration file.
type Problem struct {
	Line  int    // 1-based, or 0 when no line applies (an empty file)
	Field string // such as "destinations[1].sftp.port"; "" for the whole document
	Msg   string // what is wrong, and where possible how to fix it
}

// Error is Decode's and Load's for an invalid configuration: every problem, sorted by line.
type Error struct {
	File     string    // as given to Decode or Load
	Problems []Problem // at least one
}

// Error is Messages, one per line.
func (e *Error) Error() string { return strings.Join(e.Messages(), "\n") }

// Messages formats each problem as "file:line: field: msg".
func (e *Error) Messages() []string {
	file := cmp.Or(e.File, "config")
	msgs := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		m := file
		if p.Line > 0 {
			m += ":" + strconv.Itoa(p.Line)
		}
		if p.Field != "" {
			m += ": " + p.Field
		}
		msgs = append(msgs, m+": "+p.Msg)
	}
	return msgs
}

// yamlProblem splits a YAML syntax error into the parser's line (0: none) and message.
func yamlProblem(err error) (int, string) {
	msg := err.Error()
	if m := yamlErrRE().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// maxSyntaxLines bounds the search for a syntax error's line.
const maxSyntaxLines = 1 << 16

// yamlError reports data's YAML syntax error err at the line where it is.
//
// The parser reports the line where the failed construct started (counted
// from 0 or 1), often one early and sometimes several: a "[" on line 4
// missing its "]" as line 3. The line that matters is where the smallest
// prefix of whole lines that fails with the same message ends; the parser
// reads a stream, so every longer prefix fails the same way, and a binary
// search finds it. When it cannot, the parser's line stays.
func (d *decoder) yamlError(data []byte, err error) {
	line, msg := yamlProblem(err)
	ends, end := []int{}, 0 // ends[i]: the offset just after line i+1
	for l := range bytes.Lines(data) {
		end += len(l)
		ends = append(ends, end)
	}
	fails := func(i int) bool { // whether the first i+1 lines fail with msg
		dec := yaml.NewDecoder(bytes.NewReader(data[:ends[i]]))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); errors.Is(err, io.EOF) {
				return msg == ""
			} else if err != nil {
				_, m := yamlProblem(err)
				return m == msg
			}
		}
	}
	if len(ends) <= maxSyntaxLines {
		if k := sort.Search(len(ends), fails); k < len(ends) {
			line = k + 1
		}
	}
	d.add(line, "", "invalid YAML: %s", msg)
}
