// Package plan decides what a run does at one destination root. Make is a
// pure function of its Input: it does no I/O and is tested with tables.
package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/cleanpath"
)

// Action labels a destination's plan. The values are stable: they appear in
// text and JSON output.
type Action string

// The seven action labels of the contract (spec section 5).
const (
	PublishNew     Action = "publish_new"
	UpsertAdditive Action = "upsert_additive"
	ReplaceCatalog Action = "replace_catalog"
	SkipSame       Action = "skip_same"
	ForceReplace   Action = "force_replace"
	FailUnmanaged  Action = "fail_unmanaged"
	FailConflict   Action = "fail_conflict"
)

// Actions lists every action label in a stable order.
var Actions = []Action{PublishNew, UpsertAdditive, ReplaceCatalog, SkipSame, ForceReplace, FailUnmanaged, FailConflict}

// Failed reports whether the action refuses to publish.
func (a Action) Failed() bool { return a == FailUnmanaged || a == FailConflict }

// Op is what happens to one path.
type Op string

// Per-path operations.
const (
	OpCreate    Op = "create"    // write a path that does not exist in storage
	OpOverwrite Op = "overwrite" // replace existing bytes
	OpUnchanged Op = "unchanged" // same bytes and same record: nothing to do
	OpUpdate    Op = "update"    // same bytes, record changes (owner, source identity, url): record only
	OpDelete    Op = "delete"    // remove the path
)

// Workflow values.
const (
	Additive    = "additive"
	Replacement = "replacement"
)

// Output is one output the run wants at the root (render.Output).
type Output struct {
	// Path is relative to the destination root (clean, prefix applied).
	Path       string
	Kind       string // catalog.KindSource (a copied bundle file) or catalog.KindGenerated
	SourcePath string // bundle path it derives from
	Transform  string // "" or a catalog transform (catalog.TransformMarkdown, ...)
	URL        string // the public URL, or "" without links.base_url
	SHA256     string // "sha256:<64 lowercase hex>"
	Size       int64
	// The bytes, for the writer (the planner does not look): Content holds
	// a generated output's (nil for copies, streamed from the bundle file
	// SourcePath). Encoding names the compression (compress.Encoding) of
	// the output Plain that this output's bytes are: a sidecar, or an
	// object stored compressed (spec 3.4); SHA256 and Size are the
	// compressed bytes'.
	Content  []byte
	Encoding string
	Plain    *Output
}

// Input is everything Make decides from.
type Input struct {
	Owner   catalog.Owner
	Source  catalog.Source
	Outputs []Output
	// State classifies the root's catalog. A valid catalog's records are
	// read from Known, or when Known is nil from State.Catalog.
	State catalog.State
	// Known holds what one streaming pass over a valid catalog keeps: the
	// records this plan needs (Wants) and the record count.
	Known *Known
	// Listing maps object paths in storage to their sizes: every object of
	// the root, or when Partial only those looked up (Lookups). A path
	// ending in "/" is not an object (an empty directory, storage.Info.Dir):
	// it blocks a planned path there, and is neither deleted nor reported
	// as unmanaged. Reserved (.distributor*) paths are ignored.
	Listing map[string]int64
	// Partial says Listing holds only what was looked up: a path the
	// catalog records is then trusted to be in storage as recorded.
	Partial  bool
	Workflow string // Additive or Replacement
	Force    bool
	// Rewrite (run --rewrite) writes every planned output again, to
	// re-apply response metadata the catalog does not record: unchanged
	// and record-only items become overwrites marked Rewrite.
	Rewrite            bool
	Now                time.Time // stamps new and changed records
	DistributorVersion string    // written into the catalog
}

// Item is one path's operation.
type Item struct {
	Path     string
	Op       Op
	Output   *Output         // the planned output (nil for OpDelete)
	Previous *catalog.Output // the path's record in the current catalog, if any
	// Rewrite marks an OpOverwrite of unchanged bytes (Input.Rewrite): an
	// unchanged record keeps its updated_at.
	Rewrite bool
}

// Counts summarise a plan (spec section 8); "unchanged" includes record-only updates.
type Counts struct {
	Created     int `json:"created"`
	Overwritten int `json:"overwritten"`
	Unchanged   int `json:"unchanged"`
	Deleted     int `json:"deleted"`
	Retained    int `json:"retained"`
}

// Plan is the decision for one destination root.
type Plan struct {
	Action Action
	Reason string // explains a fail_* action, or why deletes happen
	// Items holds one entry per planned output and per delete, sorted by path.
	Items []Item
	// Unmanaged lists colliding paths for fail_unmanaged, otherwise the
	// entries in storage that nothing records or plans.
	Unmanaged []string
	Retained  int // managed outputs kept that this plan does not touch
	// Edit turns the catalog read into the one to write once every item
	// is applied; nil when nothing is written (skip_same and fail_*).
	Edit *catalog.Edit
}

// Known is the part of a valid catalog a plan needs.
type Known struct {
	Header  catalog.Header
	Records map[string]*catalog.Output // those Wants asked for, by path
	Count   int                        // the records of the whole catalog
}

// Record returns the record at path, nil for none (also when k is nil).
func (k *Known) Record(path string) *catalog.Output {
	if k == nil {
		return nil
	}
	return k.Records[path]
}

// KnownFrom indexes a whole catalog.
func KnownFrom(c *catalog.Catalog) *Known {
	return &Known{Header: c.Header(), Records: c.Index(), Count: len(c.Outputs)}
}

// Wants filters the records a plan of outputs for owner needs, so its
// memory follows the plan, not the catalog: records at planned paths, at
// their parents or below them (collisions), and for a replacement every
// record of owner (its deletes).
func Wants(outputs []Output, owner catalog.Owner, workflow string) func(*catalog.Output) bool {
	planned := make(map[string]bool, len(outputs))
	dirs := map[string]bool{}
	for i := range outputs {
		planned[outputs[i].Path] = true
		for d := Parent(outputs[i].Path); d != "" && !dirs[d]; d = Parent(d) {
			dirs[d] = true
		}
	}
	return func(o *catalog.Output) bool {
		if planned[o.Path] || dirs[o.Path] || (workflow == Replacement && o.Owner() == owner) {
			return true
		}
		if p, ok := catalog.SidecarOf(o.Path, o.Transform); ok && planned[p] {
			return true // a sidecar of a planned output (staleSidecars)
		}
		for d := Parent(o.Path); d != ""; d = Parent(d) {
			if planned[d] {
				return true
			}
		}
		return false
	}
}

// Lookups returns, sorted and once each, what a plan over a valid catalog
// (known) looks up instead of listing the whole root: the planned paths the
// catalog does not record, and their parent directories (a file in the way?).
func Lookups(outputs []Output, known *Known) (paths, parents []string) {
	seen := map[string]bool{}
	for i := range outputs {
		p := outputs[i].Path
		if known != nil && known.Records[p] != nil {
			continue
		}
		paths = append(paths, p)
		for d := Parent(p); d != "" && !seen[d]; d = Parent(d) {
			seen[d] = true
			parents = append(parents, d)
		}
	}
	sort.Strings(paths)
	sort.Strings(parents)
	return paths, parents
}

// Counts tallies the plan's items.
func (p *Plan) Counts() Counts {
	c := Counts{Retained: p.Retained}
	for _, it := range p.Items {
		switch it.Op {
		case OpCreate:
			c.Created++
		case OpOverwrite:
			c.Overwritten++
		case OpUnchanged, OpUpdate:
			c.Unchanged++
		case OpDelete:
			c.Deleted++
		}
	}
	return c
}

// Writes returns the create and overwrite items.
func (p *Plan) Writes() []Item {
	return slices.DeleteFunc(slices.Clone(p.Items), func(it Item) bool { return it.Op != OpCreate && it.Op != OpOverwrite })
}

// Make computes the plan. It fails only on broken preconditions (unknown
// workflow, duplicate or unclean planned paths); refusals are fail_* actions.
func Make(in Input) (*Plan, error) {
	if in.Workflow != Additive && in.Workflow != Replacement {
		return nil, fmt.Errorf("plan: unknown workflow %q", in.Workflow)
	}
	planned := make(map[string]*Output, len(in.Outputs))
	for i := range in.Outputs {
		o := &in.Outputs[i]
		if err := cleanpath.CheckUnreserved(o.Path); err != nil {
			return nil, fmt.Errorf("plan: output %w", err)
		}
		if _, dup := planned[o.Path]; dup {
			return nil, fmt.Errorf("plan: output path %q planned twice", o.Path)
		}
		planned[o.Path] = o
	}
	listing := make(map[string]int64, len(in.Listing))
	for p, size := range in.Listing {
		if !cleanpath.HasReservedSegment(p) {
			listing[p] = size
		}
	}
	if in.Force {
		return makeFresh(in, planned, listing, &Plan{Action: ForceReplace, Reason: "--force: the root is replaced by this run's outputs"}), nil
	}
	switch in.State.Status {
	case catalog.StatusInvalid, catalog.StatusFuture:
		reason := fmt.Sprintf("destination state (%s) is %s", catalog.FileName, in.State.Status)
		if in.State.Problem != nil {
			reason += ": " + in.State.Problem.Error()
		}
		um := unmanaged(listing, nil, planned)
		if in.State.Status == catalog.StatusInvalid {
			reason += "\n" + catalog.InvalidChoices(in.Owner, um)
		} else {
			reason += " (upgrade distributor to read it; or review it, then rerun with --force to replace the root)"
		}
		return &Plan{Action: FailConflict, Reason: reason, Items: plannedItems(in, nil, listing), Unmanaged: um}, nil
	case catalog.StatusLegacy:
		p := &Plan{Action: UpsertAdditive}
		if in.Workflow == Replacement {
			p = &Plan{Action: ReplaceCatalog, Reason: fmt.Sprintf("legacy schema %d state: replacement clears the root", in.State.SchemaVersion)}
		}
		return makeFresh(in, planned, listing, p), nil
	case catalog.StatusNone:
		return makeCatalog(in, planned, listing, nil), nil
	case catalog.StatusCatalog:
		known := in.known()
		if known == nil {
			return nil, fmt.Errorf("plan: catalog state without a catalog")
		}
		return makeCatalog(in, planned, listing, known), nil
	default:
		return nil, fmt.Errorf("plan: unknown state %q", in.State.Status)
	}
}

// known returns in.Known, or else the index of in.State.Catalog (nil for none).
func (in Input) known() *Known {
	if in.Known == nil && in.State.Catalog != nil {
		return KnownFrom(in.State.Catalog)
	}
	return in.Known
}

// makeCatalog plans over no state (cat == nil) or a valid catalog.
func makeCatalog(in Input, planned map[string]*Output, listing map[string]int64, cat *Known) *Plan {
	var records map[string]*catalog.Output
	if cat != nil {
		records = cat.Records
	}
	items := plannedItems(in, records, listing)
	if coll := collisions(planned, listing, records); len(coll) > 0 {
		shown := strings.Join(coll[:min(len(coll), 5)], ", ")
		if len(coll) > 5 {
			shown += fmt.Sprintf(", and %d more", len(coll)-5)
		}
		return &Plan{Action: FailUnmanaged, Items: items, Unmanaged: coll,
			Reason: fmt.Sprintf("%d planned path(s) exist in storage but are not managed by distributor: %s (remove them, or rerun with --force after review)", len(coll), shown)}
	}
	for _, rec := range records {
		plain, sidecar := catalog.SidecarOf(rec.Path, rec.Transform)
		if planned[rec.Path] == nil && (in.Workflow == Replacement && rec.Owner() == in.Owner || sidecar && planned[plain] != nil) {
			// Replacement deletes this owner's unplanned outputs; every
			// workflow deletes the sidecars of a planned output that this
			// plan does not write again: they would serve stale bytes.
			items = append(items, Item{Path: rec.Path, Op: OpDelete, Previous: rec})
		}
	}
	sortItems(items)
	p := &Plan{Items: items, Unmanaged: unmanaged(listing, records, planned)}
	if cat != nil {
		p.Retained = cat.Count // less the records at planned or deleted paths
		for _, it := range items {
			if it.Previous != nil {
				p.Retained--
			}
		}
	}
	switch {
	case cat == nil:
		p.Action = PublishNew
	case !slices.ContainsFunc(items, func(it Item) bool { return it.Op != OpUnchanged }):
		p.Action = SkipSame
		return p
	case in.Workflow == Replacement:
		p.Action = ReplaceCatalog
	default:
		p.Action = UpsertAdditive
	}
	p.Edit = nextCatalog(in, cat, items)
	return p
}

// makeFresh completes p (Action and Reason set) with a fresh catalog for a
// root nothing is recorded for (legacy state, --force): planned paths are
// overwritten; a replacement or --force clears every other entry of the root.
func makeFresh(in Input, planned map[string]*Output, listing map[string]int64, p *Plan) *Plan {
	p.Items = plannedItems(in, nil, listing)
	if p.Action == UpsertAdditive {
		p.Unmanaged = unmanaged(listing, nil, planned)
	}
	for path := range listing {
		if p.Action != UpsertAdditive && planned[path] == nil && !isDir(path) {
			p.Items = append(p.Items, Item{Path: path, Op: OpDelete})
		}
	}
	sortItems(p.Items)
	p.Edit = nextCatalog(in, nil, p.Items)
	return p
}

// plannedItems classifies each planned output against records and listing.
func plannedItems(in Input, records map[string]*catalog.Output, listing map[string]int64) []Item {
	items := make([]Item, 0, len(in.Outputs))
	for i := range in.Outputs {
		o := &in.Outputs[i]
		rec := records[o.Path]
		size, present := listing[o.Path]
		if !present && in.Partial && rec != nil {
			size, present = rec.Size, true // not looked up: trusted as recorded
		}
		it := Item{Path: o.Path, Output: o, Previous: rec}
		switch {
		case !present:
			it.Op = OpCreate
		case rec == nil || rec.SHA256 != o.SHA256 || rec.Size != o.Size || size != o.Size:
			it.Op = OpOverwrite
		case sameRecord(rec, in, o):
			it.Op = OpUnchanged
		default:
			it.Op = OpUpdate
		}
		if in.Rewrite && (it.Op == OpUnchanged || it.Op == OpUpdate) {
			it.Op, it.Rewrite = OpOverwrite, true
		}
		items = append(items, it)
	}
	sortItems(items)
	return items
}

func sameRecord(rec *catalog.Output, in Input, o *Output) bool {
	sourcePath, transform := o.recorded()
	return rec.Owner() == in.Owner &&
		rec.Source.ID == in.Source.ID && rec.Source.Digest == in.Source.Digest &&
		rec.Source.Created.Equal(in.Source.Created) &&
		rec.Kind == o.Kind && rec.SourcePath == sourcePath && rec.Transform == transform &&
		rec.URL == o.URL
}

// recorded returns the source_path and transform a record holds (generated only).
func (o *Output) recorded() (sourcePath, transform string) {
	if o.Kind != catalog.KindGenerated {
		return "", ""
	}
	return o.SourcePath, o.Transform
}

// nextCatalog is the edit that turns the catalog read (cat; nil for none,
// or to start fresh) into the one that records every item applied.
func nextCatalog(in Input, cat *Known, items []Item) *catalog.Edit {
	now := in.Now.UTC().Truncate(time.Second)
	e := &catalog.Edit{Fresh: cat == nil, Put: make([]catalog.Output, 0, len(items)),
		Header: catalog.Header{DistributorVersion: in.DistributorVersion, CreatedAt: now, UpdatedAt: now}}
	if cat != nil {
		e.Header.CreatedAt = cat.Header.CreatedAt
	}
	for _, it := range items {
		if it.Op == OpDelete {
			e.Delete = append(e.Delete, it.Path)
			continue
		}
		e.Put = append(e.Put, Record(in, it, now))
	}
	return e
}

// Record is the catalog record an applied write/update/unchanged item leaves.
// A path that was recorded keeps its created_at; an unchanged one (also one
// rewritten with the same bytes and record) keeps its record as it was.
func Record(in Input, it Item, now time.Time) catalog.Output {
	if it.Previous != nil && (it.Op == OpUnchanged || it.Rewrite && sameRecord(it.Previous, in, it.Output)) {
		return *it.Previous
	}
	o := it.Output
	sourcePath, transform := o.recorded()
	rec := catalog.Output{
		Path: o.Path, PipelineID: in.Owner.PipelineID, DestinationID: in.Owner.DestinationID,
		Source: in.Source, Kind: o.Kind, SourcePath: sourcePath, Transform: transform,
		URL: o.URL, SHA256: o.SHA256, Size: o.Size, CreatedAt: now, UpdatedAt: now,
	}
	if it.Previous != nil {
		rec.CreatedAt = it.Previous.CreatedAt
	}
	return rec
}

// collisions lists planned paths blocked by unrecorded storage entries: at
// the same path, a file where the path needs a directory, or entries below
// it (an empty directory at the path is one: it is listed as path + "/").
func collisions(planned map[string]*Output, listing map[string]int64, records map[string]*catalog.Output) []string {
	dirs := map[string]bool{} // directories implied by unrecorded entries
	for path := range listing {
		if records[path] != nil {
			continue
		}
		for d := Parent(path); d != ""; d = Parent(d) {
			dirs[d] = true
		}
	}
	var out []string
	for path := range planned {
		_, present := listing[path]
		blocked := (present && records[path] == nil) || dirs[path]
		for d := Parent(path); d != "" && !blocked; d = Parent(d) {
			if _, isFile := listing[d]; isFile && records[d] == nil {
				blocked = true
			}
		}
		if blocked {
			out = append(out, path)
		}
	}
	sort.Strings(out)
	return out
}

// isDir reports whether listing path p is not an object (see Input.Listing).
func isDir(p string) bool { return strings.HasSuffix(p, "/") }

// Parent is the directory of path p, "" at the root.
func Parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// unmanaged lists storage entries that no record holds and no output plans.
func unmanaged(listing map[string]int64, records map[string]*catalog.Output, planned map[string]*Output) []string {
	out := []string{}
	for path := range listing {
		if records[path] == nil && planned[path] == nil && !isDir(path) {
			out = append(out, path)
		}
	}
	sort.Strings(out)
	return out
}

func sortItems(items []Item) {
	sort.SliceStable(items, func(i, j int) bool { return items[i].Path < items[j].Path })
}

// CheckForceRoot refuses --force on a root too broad to wipe: "/", a
// top-level directory ("/srv"), or with keyPrefix a whole bucket.
func CheckForceRoot(keyPrefix bool, root string) error {
	clean := strings.Trim(root, "/")
	switch {
	case keyPrefix && clean == "":
		return fmt.Errorf("--force refuses to clear a whole bucket: give the destination a key prefix")
	case keyPrefix:
		return nil
	case clean == "" || !strings.Contains(clean, "/"):
		return fmt.Errorf("--force refuses to clear %q: it is / or a top-level directory", root)
	}
	for _, seg := range strings.Split(clean, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("--force refuses to clear %q: the root is not a clean path", root)
		}
	}
	return nil
}

// Settle returns the edit whose catalog truthfully describes a root after a
// failed attempt of p applied only done (writes completed and not rolled
// back, completed deletes); nil when done is empty.
func Settle(in Input, p *Plan, done []Item) *catalog.Edit {
	if len(done) == 0 {
		return nil
	}
	var base *Known
	if in.State.Status == catalog.StatusCatalog && p.Action != ForceReplace {
		base = in.known()
	}
	return nextCatalog(in, base, done)
}
