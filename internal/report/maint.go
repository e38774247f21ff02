package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// The maintenance commands' documents (prune, reconcile-state, verify,
// state show; spec section 8). Lists are never null: an empty list is [].

// Target starts every maintenance document: the command and its root.
type Target struct {
	Command       string `json:"command"`
	PipelineID    string `json:"pipeline_id"`
	DestinationID string `json:"destination_id"`
	Root          string `json:"root"`
}

// Failure ends a maintenance document: Error in brief, ErrorDetail whole.
type Failure struct {
	Error       *string `json:"error"`
	ErrorDetail *string `json:"error_detail"`
	// Cause is the error Error renders, for the exit status.
	Cause error `json:"-"`
}

// Fail records err as the document's failure.
func (f *Failure) Fail(err error) {
	f.Error, f.ErrorDetail, f.Cause = Str(Brief(err)), Str(err.Error()), err
}

// Failed reports whether the command must exit 1.
func (f *Failure) Failed() bool { return f.Error != nil }

// Err is the error the document's failure renders (Cause), or nil.
func (f *Failure) Err() error { return f.Cause }

// Record names a catalog output record and its owner.
type Record struct {
	Path          string `json:"path"`
	PipelineID    string `json:"pipeline_id"`
	DestinationID string `json:"destination_id"`
}

func RecordOf(o *catalog.Output) Record {
	return Record{Path: o.Path, PipelineID: o.PipelineID, DestinationID: o.DestinationID}
}

// PruneEntry is one output selected (or deleted) by prune.
type PruneEntry struct {
	Path      string `json:"path"`
	UpdatedAt string `json:"updated_at"`
}

// PruneSource is the source identity of a publication.
type PruneSource struct {
	ID      string `json:"id"`
	Digest  string `json:"digest"`
	Created string `json:"created"`
}

// PrunePublication is the outputs one owner holds under one source identity, pruned whole or not at all.
type PrunePublication struct {
	Source PruneSource `json:"source"`
	// UpdatedAt is the latest updated_at among its outputs.
	UpdatedAt string   `json:"updated_at"`
	Paths     []string `json:"paths"`
}

// PrunePolicy is the retention.prune policy a prune applied.
type PrunePolicy struct {
	// OlderThan is the configured age (e.g. "30d", "1d12h").
	OlderThan string `json:"older_than"`
	KeepMin   int    `json:"keep_min"`
	// Cutoff is now minus older_than.
	Cutoff string `json:"cutoff"`
}

// Prune is the document `distributor prune` prints.
type Prune struct {
	Target
	DryRun bool        `json:"dry_run"`
	State  string      `json:"state"`
	Policy PrunePolicy `json:"policy"`
	// Owned counts the outputs this pipeline/destination owns at the root.
	Owned int `json:"owned"`
	// Publications are those the policy selects, oldest first; Selected their outputs, by path.
	Publications []PrunePublication `json:"publications"`
	Selected     []PruneEntry       `json:"selected"`
	// Deleted: files deleted and records removed (empty in a dry run).
	Deleted []PruneEntry `json:"deleted"`
	// Rebuilt: archive index and feed paths rewritten without them (empty in a dry run).
	Rebuilt []string `json:"rebuilt"`
	// Warnings did not make the command fail.
	Warnings []string `json:"warnings,omitempty"`
	RootRecovery
	Failure
}

// ReconcileState is the document `distributor reconcile-state` prints.
type ReconcileState struct {
	Target
	DryRun bool `json:"dry_run"`
	// AllOwners: every owner's records were checked, not only this one's.
	AllOwners bool   `json:"all_owners"`
	State     string `json:"state"`
	Checked   int    `json:"checked"`
	// Missing lists checked records whose file is not in storage.
	Missing []Record `json:"missing"`
	// Unmanaged lists storage paths no record holds (reserved names excluded).
	Unmanaged []string `json:"unmanaged"`
	// Removed lists the records actually dropped (empty in a dry run, or if the catalog could not be written).
	Removed []Record `json:"removed"`
	// TempFiles lists the temporary files (.distributor-tmp-*) interrupted writes left: removed unless a dry run.
	TempFiles []string `json:"temp_files"`
	// Warnings: as in Prune.
	Warnings []string `json:"warnings,omitempty"`
	RootRecovery
	Failure
}

// VerifyCorrupt is a managed output whose stored bytes differ from its record.
type VerifyCorrupt struct {
	Record
	// Expected and Actual are "sha256:<hex> (<size> bytes)".
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// Verify is the document `distributor verify` prints.
type Verify struct {
	Target
	AllOwners bool `json:"all_owners"`
	// Quick: only presence and sizes were checked (verify --quick).
	Quick bool   `json:"quick"`
	State string `json:"state"`
	// OK counts outputs matching their record (with Quick, in size only).
	OK      int             `json:"ok"`
	Missing []Record        `json:"missing"`
	Corrupt []VerifyCorrupt `json:"corrupt"`
	// TempFiles: as in ReconcileState; the next writing command removes them.
	TempFiles []string `json:"temp_files"`
	Warnings  []string `json:"warnings,omitempty"`
	// RecoveryPending: a dead writer's journal is at the root; missing or
	// corrupt outputs may be its unfinished work.
	RecoveryPending bool `json:"recovery_pending,omitempty"`
	Failure
}

// Failed reports whether verify must exit 1: an error, or any missing or corrupt output.
func (v *Verify) Failed() bool { return v.Error != nil || len(v.Missing) > 0 || len(v.Corrupt) > 0 }

// StateShow is what `distributor state show` found at a root: the catalog's top fields, its records and
// bytes streamed (Outputs, WriteRaw) from a copy of what was read, which Close releases.
type StateShow struct {
	Target `json:"-"`
	// State is "none" or "catalog" (other states are errors).
	State string `json:"-"`
	// The catalog's top fields, set when State is "catalog".
	SchemaVersion int            `json:"-"`
	Header        catalog.Header `json:"-"`
	Count         int            `json:"-"`
	// Warnings: with --output json they are logged instead.
	Warnings []string `json:"-"`
	src      StateSource
}

// StateSource is where a StateShow streams its catalog from.
type StateSource interface {
	Outputs(fn func(*catalog.Output) error) error
	WriteRaw(w io.Writer) error
	Close() error
}

func (s *StateShow) Stream(src StateSource) { s.src = src }

// Outputs calls fn for every record, in path order, each a fresh Output fn may keep; fn's error stops
// the pass. Each call reads the records again, in memory that does not grow with the catalog.
func (s *StateShow) Outputs(fn func(*catalog.Output) error) error {
	if s.src == nil {
		return nil
	}
	return s.src.Outputs(fn)
}

// WriteRaw writes the stored .distributor.json to w exactly as it was read.
func (s *StateShow) WriteRaw(w io.Writer) error {
	if s.src == nil {
		return nil
	}
	return s.src.WriteRaw(w)
}

// Close releases the copy Outputs and WriteRaw read (maybe a temp file).
func (s *StateShow) Close() error {
	if s.src == nil {
		return nil
	}
	err := s.src.Close()
	s.src = nil
	return err
}

// Unlock is the document `distributor unlock` prints.
type Unlock struct {
	Target
	Locked  bool        `json:"locked"`
	Holder  *LockHolder `json:"holder"`
	Stale   bool        `json:"stale"`
	Removed bool        `json:"removed"`
	Failure
}

// LockHolder describes the process a lock record names.
type LockHolder struct {
	ID        string `json:"id"`
	Host      string `json:"host"`
	PID       int    `json:"pid"`
	Command   string `json:"command"`
	Acquired  string `json:"acquired_at"`
	ExpiresAt string `json:"expires_at"`
}

// FormatLockTime formats a lock record's time as the unlock document does.
func FormatLockTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// maxPathsText is how many paths a text report lists before counting the rest.
const maxPathsText = 20

func moreLine(w io.Writer, rest int, what string) {
	if what != "" {
		what = " " + what
	}
	fmt.Fprintf(w, "    ... and %d more%s (--output json lists them all)\n", rest, what)
}

// upTo writes line for the first maxPathsText items, then counts the rest.
func upTo[T any](w io.Writer, items []T, what string, line func(T)) {
	for i, it := range items {
		if i == maxPathsText {
			moreLine(w, len(items)-i, what)
			return
		}
		line(it)
	}
}

const noCatalogNote = "no catalog (" + catalog.FileName + ") at this root: nothing is managed here"

func owner(pipelineID, destinationID string) string { return pipelineID + "/" + destinationID }

// writeHead writes a report's first line ("prune p/d at ROOT", suffix) and warnings; returns the owner.
func writeHead(w *fitter, t *Target, suffix string, warnings []string) string {
	who := owner(t.PipelineID, t.DestinationID)
	fmt.Fprintf(w, "%s %s at %s%s\n", t.Command, who, t.Root, suffix)
	w.list("  warning: %s\n", "    ", warnings)
	return who
}

func (p *Prune) text(w *fitter) {
	who := writeHead(w, &p.Target, map[bool]string{true: " (dry run)"}[p.DryRun], p.Warnings)
	p.RootRecovery.write(w, "  ", false)
	fmt.Fprintf(w, "  policy   publications older than %s, never the %d newest\n", p.Policy.OlderThan, p.Policy.KeepMin)
	fmt.Fprintf(w, "           (old enough: every output updated before %s)\n", p.Policy.Cutoff)
	if p.State == string(catalog.StatusNone) && p.Error == nil {
		fmt.Fprintf(w, "  %s, nothing to prune\n", noCatalogNote)
		return
	}
	if p.State == string(catalog.StatusCatalog) {
		fmt.Fprintf(w, "  %s owns %d output(s) here; %d publication(s) selected (%d output(s))\n", who, p.Owned, len(p.Publications), len(p.Selected))
	}
	writePrunePublications(w, p)
	for _, r := range p.Rebuilt {
		w.pathLine(fmt.Sprintf("    %-12s ", "rebuilt"), r, "  (no longer links the deleted publications)")
	}
	switch {
	case p.Error != nil:
		fmt.Fprintf(w, "  FAILED: %s\n", indentLines(*p.Error, "    "))
		if len(p.Deleted) > 0 {
			fmt.Fprintf(w, "  %d output(s) were deleted and their records removed; the others are still managed\n", len(p.Deleted))
		}
	case len(p.Publications) == 0:
		fmt.Fprintf(w, "  nothing to prune: no publication of %s is older than %s beyond the %d newest\n", who, p.Policy.OlderThan, p.Policy.KeepMin)
	case p.DryRun:
		fmt.Fprintf(w, "  dry run: nothing was deleted; run with --apply instead of --dry-run to delete these %d publication(s)\n", len(p.Publications))
	default:
		fmt.Fprintf(w, "  ok: %d publication(s), %d output(s) deleted and their records removed from %s\n", len(p.Publications), len(p.Deleted), catalog.FileName)
	}
}

// writePrunePublications lists the selected publications and up to maxPathsText of their paths.
func writePrunePublications(w *fitter, p *Prune) {
	deleted := make(map[string]bool, len(p.Deleted))
	for _, d := range p.Deleted {
		deleted[d.Path] = true
	}
	shown := 0
	for i, pub := range p.Publications {
		if shown >= maxPathsText {
			moreLine(w, len(p.Publications)-i, "selected publication(s)")
			return
		}
		fmt.Fprintf(w, "    publication %s: %d output(s)\n      created %s, last updated %s\n", pub.Source.ID, len(pub.Paths), pub.Source.Created, pub.UpdatedAt)
		for j, path := range pub.Paths {
			if shown >= maxPathsText {
				fmt.Fprintf(w, "      ... and %d more output(s) of this publication\n", len(pub.Paths)-j)
				break
			}
			op := "would delete"
			switch {
			case deleted[path]:
				op = "deleted"
			case !p.DryRun:
				op = "kept"
			}
			w.pathLine(fmt.Sprintf("      %-12s ", op), path, "")
			shown++
		}
	}
}

func (r *ReconcileState) text(w *fitter) {
	who := writeHead(w, &r.Target, map[bool]string{true: " (dry run)"}[r.DryRun], r.Warnings)
	r.RootRecovery.write(w, "  ", false)
	if r.State == string(catalog.StatusNone) && r.Error == nil {
		fmt.Fprintf(w, "  %s, no record to check\n", noCatalogNote)
	} else if r.State == string(catalog.StatusCatalog) {
		scope := "of " + who
		if r.AllOwners {
			scope = "of every owner (--all-owners)"
		}
		fmt.Fprintf(w, "  checked %d record(s) %s: %d missing\n", r.Checked, scope, len(r.Missing))
	}
	removed := make(map[string]bool, len(r.Removed))
	for _, m := range r.Removed {
		removed[m.Path] = true
	}
	upTo(w, r.Missing, "missing record(s)", func(m Record) {
		what := "file gone, record kept"
		switch {
		case removed[m.Path]:
			what = "file gone, record removed"
		case r.DryRun:
			what = "file gone, record would be removed"
		}
		w.pathLine("    missing    ", m.Path, fmt.Sprintf("  (%s): %s", owner(m.PipelineID, m.DestinationID), what))
	})
	if n := len(r.Unmanaged); n > 0 {
		fmt.Fprintf(w, "  %d unmanaged path(s) (in storage, recorded nowhere; left alone, not adopted):\n", n)
		upTo(w, r.Unmanaged, "", func(u string) { w.pathLine("    unmanaged  ", u, "") })
	}
	writeTempFiles(w, r.TempFiles, map[bool]string{true: "would be removed", false: "removed"}[r.DryRun])
	switch {
	case r.Error != nil:
		fmt.Fprintf(w, "  FAILED: %s\n", indentLines(*r.Error, "    "))
		fmt.Fprintf(w, "  %s was not changed; no file was deleted\n", catalog.FileName)
	case len(r.Missing) == 0:
		fmt.Fprintf(w, "  ok: nothing to repair, every checked record's file exists\n")
	case r.DryRun:
		fmt.Fprintf(w, "  dry run: %s unchanged; run without --dry-run to remove these %d record(s)\n", catalog.FileName, len(r.Missing))
	default:
		fmt.Fprintf(w, "  ok: removed %d record(s) of missing files from %s; no file was deleted\n", len(r.Removed), catalog.FileName)
	}
}

func writeTempFiles(w *fitter, temps []string, what string) {
	if len(temps) == 0 {
		return
	}
	fmt.Fprintf(w, "  %d temporary file(s) left by interrupted writes (%s):\n", len(temps), what)
	upTo(w, temps, "", func(p string) { w.pathLine("    temp       ", p, "") })
}

func (v *Verify) text(w *fitter) {
	scope := "outputs of " + owner(v.PipelineID, v.DestinationID)
	if v.AllOwners {
		scope = "outputs of every owner"
	}
	if v.Quick {
		scope += "; --quick: presence and sizes only, contents not read"
	}
	writeHead(w, &v.Target, " ("+scope+")", v.Warnings)
	upTo(w, v.Missing, "missing output(s)", func(m Record) {
		w.pathLine("  MISSING  ", m.Path, fmt.Sprintf("  (%s): recorded, not in storage", owner(m.PipelineID, m.DestinationID)))
	})
	upTo(w, v.Corrupt, "corrupt output(s)", func(c VerifyCorrupt) {
		w.pathLine("  CORRUPT  ", c.Path, fmt.Sprintf("  (%s)", owner(c.PipelineID, c.DestinationID)))
		w.digestLine("    expected ", c.Expected)
		w.digestLine("    found    ", c.Actual)
	})
	if v.Error != nil {
		fmt.Fprintf(w, "  FAILED: %s\n", indentLines(*v.Error, "    "))
		return
	}
	writeTempFiles(w, v.TempFiles, "the next run, prune --apply or reconcile-state removes them")
	fmt.Fprintf(w, "  %d ok, %d missing, %d corrupt\n", v.OK, len(v.Missing), len(v.Corrupt))
	if !v.Failed() {
		switch {
		case v.OK == 0 && v.AllOwners:
			fmt.Fprintf(w, "  ok, but nothing was verified: the catalog records no output at all\n")
		case v.OK == 0:
			fmt.Fprintf(w, "  ok, but nothing was verified: the catalog records no output of %s (--all-owners checks every owner's)\n",
				owner(v.PipelineID, v.DestinationID))
		case v.Quick:
			fmt.Fprintf(w, "  ok: every checked output is present with its recorded size (contents not compared: run verify without --quick for that)\n")
		default:
			fmt.Fprintf(w, "  ok: every checked output matches its recorded sha256 and size\n")
		}
		return
	}
	fmt.Fprintf(w, "  FAILED: %d problem(s)\n", len(v.Missing)+len(v.Corrupt))
	if v.RecoveryPending {
		fmt.Fprintf(w, "  a dead run's intent journal is pending at this root: these problems may be its unfinished work. "+
			"One `distributor run` (or `distributor reconcile-state`) on this destination recovers the root first; "+
			"run verify again after it. Only for problems that remain then:\n")
	}
	if len(v.Missing) > 0 {
		fmt.Fprintf(w, "  missing: `distributor run --rewrite` writes again every output its bundle still produces "+
			"(a plain run trusts the catalog and does not look for recorded files); "+
			"`distributor reconcile-state` drops the records of the others\n")
	}
	if len(v.Corrupt) > 0 {
		fmt.Fprintf(w, "  corrupt: restore the file, or `distributor run --rewrite` writes it again\n")
	}
}

// digestLine writes label and content ("sha256:<hex> (<size> bytes)"), the digest elided to fit.
func (f *fitter) digestLine(label, content string) {
	digest, rest, _ := strings.Cut(content, " ")
	if rest != "" {
		rest = " " + rest
	}
	if f.width > 0 {
		digest = elide(digest, max(f.width-runeLen(label+rest), minPath))
	}
	fmt.Fprintf(f, "%s%s%s\n", label, digest, rest)
}

// WriteStateText renders a catalog as a table of every output, fitted to width columns (see
// stateTable): one pass over the records measures columns and counts owners, a second writes rows.
func WriteStateText(out io.Writer, s *StateShow, width int) error {
	b := bufio.NewWriter(out)
	w := newFitter(b, width)
	w.list("warning: %s\n", "  ", s.Warnings)
	if s.State != string(catalog.StatusCatalog) {
		fmt.Fprintf(w, "state none at %s: %s does not exist; nothing is managed here\n", s.Root, catalog.FileName)
		return stateWritten(w, b, nil)
	}
	head := fmt.Sprintf("catalog of %s (state catalog, schema %d", s.Root, s.SchemaVersion)
	if s.Header.DistributorVersion != "" {
		head += ", written by distributor " + s.Header.DistributorVersion
	}
	fmt.Fprintln(w, head+")")
	fmt.Fprintf(w, "  created %s, updated %s\n", catalog.FormatTime(s.Header.CreatedAt), catalog.FormatTime(s.Header.UpdatedAt))
	if err := stateWritten(w, b, nil); err != nil {
		return err
	}
	who := owner(s.PipelineID, s.DestinationID)
	t := newTable([]string{"PATH", "OWNER", "KIND", "SIZE", "UPDATED", "URL"}, []int{minPath, 0, 0, 0, 0, 0})
	mine, owners := 0, []string{}
	err := s.Outputs(func(o *catalog.Output) error {
		ow := owner(o.PipelineID, o.DestinationID)
		switch {
		case ow == who:
			mine++
		case !slices.Contains(owners, ow):
			owners = append(owners, ow)
		}
		t.grow(stateCells(o, ow)...)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %d output(s): %d of %s, %d of %d other owner(s)\n", s.Count, mine, who, s.Count-mine, len(owners))
	if s.Count == 0 {
		return stateWritten(w, b, nil)
	}
	if mine > 0 {
		owners = append(owners, who)
	}
	slices.Sort(owners)
	key, notes := stateTable(t, owners, width)
	for _, n := range notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintln(w)
	ws := t.fit(width)
	t.writeRow(w, ws, t.heads)
	err = s.Outputs(func(o *catalog.Output) error {
		t.writeRow(w, ws, stateCells(o, key(owner(o.PipelineID, o.DestinationID))))
		return w.err
	})
	return stateWritten(w, b, err)
}

// stateWritten flushes w and b; it returns a write failure, else err.
func stateWritten(w *fitter, b *bufio.Writer, err error) error {
	w.flush()
	if w.err == nil {
		w.err = b.Flush()
	}
	switch {
	case w.err != nil:
		return fmt.Errorf("write the state table: %w", w.err)
	case err != nil:
		return err
	}
	return nil
}

func stateCells(o *catalog.Output, who string) []string {
	n := o.Size
	return []string{o.Path, who, o.Kind, size(&n), catalog.FormatTime(o.UpdatedAt), cmp.Or(o.URL, "-")}
}

// stateTable fits t to width and returns how it shows an owner and the
// notes above it: it drops the url, then numbers the owners (drops the
// column if there is one), then drops the kind, and cuts paths.
func stateTable(t *table, owners []string, width int) (func(string) string, []string) {
	var left, notes []string
	key := func(o string) string { return o }
	noURL := !t.fits(width, false)
	if noURL {
		t.drop(5)
		left = append(left, "URL")
	}
	if !t.fits(width, false) {
		// Owners by number, listed above the table; one owner, not at all.
		key = func(o string) string { return strconv.Itoa(slices.Index(owners, o) + 1) }
		t.wide[1] = max(runeLen(t.heads[1]), runeLen(key(owners[len(owners)-1])))
		if len(owners) == 1 {
			t.drop(1)
			notes = append(notes, "every output is "+owners[0]+"'s")
		}
		for i, o := range owners {
			if len(owners) > 1 {
				notes = append(notes, fmt.Sprintf("owner %d: %s", i+1, o))
			}
		}
	}
	if !t.fits(width, true) {
		t.drop(2)
		left = append(left, "KIND")
	}
	if len(left) > 0 {
		notes = append(notes, fmt.Sprintf("left out to fit %d columns: %s (--output json has them)", width, strings.Join(left, ", ")))
	}
	return key, notes
}

func (u *Unlock) text(w *fitter) {
	fmt.Fprintf(w, "root %s (pipeline %s, destination %s)\n", u.Root, u.PipelineID, u.DestinationID)
	if !u.Locked {
		if u.Error != nil { // the lock could not even be read
			fmt.Fprintf(w, "  FAILED: %s\n", *u.Error)
			return
		}
		fmt.Fprintf(w, "  not locked: nothing to do\n")
		return
	}
	h := u.Holder
	fmt.Fprintf(w, "  locked by %s on host %s, pid %d, since %s (lease until %s)\n", h.Command, h.Host, h.PID, h.Acquired, h.ExpiresAt)
	switch {
	case u.Removed && u.Stale:
		fmt.Fprintf(w, "  the lock was stale: removed\n")
	case u.Removed:
		fmt.Fprintf(w, "  removed (--force)\n")
	case u.Error != nil:
		fmt.Fprintf(w, "  FAILED: %s\n", *u.Error)
	}
}
