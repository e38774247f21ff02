package report

import (
	"io"

	"github.com/distributor-dev/distributor/internal/catalog"
)

// The documents of the maintenance commands (prune, reconcile-state, verify,
// state show). Each works on one destination root, selected by a pipeline and
// one of its destinations, and carries command, pipeline_id, destination_id
// and root (spec section 8). Lists are never null: an empty list is [].

// Target is what every maintenance document starts with: the command and
// the root it worked on.
type Target struct {
	Command       string `json:"command"`
	PipelineID    string `json:"pipeline_id"`
	DestinationID string `json:"destination_id"`
	Root          string `json:"root"`
}

// Failure is how a maintenance document ends: its error, if any.
type Failure struct {
	// Error is the failure in brief, ErrorDetail the whole error.
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

// Record names a catalog output record and its owner.
type Record struct {
	Path          string `json:"path"`
	PipelineID    string `json:"pipeline_id"`
	DestinationID string `json:"destination_id"`
}

// RecordOf returns the Record naming o.
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

// PrunePublication is one publication prune selects: the outputs one owner
// holds under one source identity, pruned whole or not at all.
type PrunePublication struct {
	Source PruneSource `json:"source"`
	// UpdatedAt is the latest updated_at among its outputs: it is old
	// enough to prune when this is before the cutoff.
	UpdatedAt string `json:"updated_at"`
	// Paths are its outputs' paths, sorted.
	Paths []string `json:"paths"`
}

// PrunePolicy is the retention.prune policy a prune applied.
type PrunePolicy struct {
	// OlderThan is the configured age, as written in the configuration
	// style (e.g. "30d", "1d12h").
	OlderThan string `json:"older_than"`
	KeepMin   int    `json:"keep_min"`
	// Cutoff is now minus older_than: a publication whose outputs were all
	// updated strictly before it is old enough to prune.
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
	// Publications lists the publications the policy selects, oldest
	// first (by source created).
	Publications []PrunePublication `json:"publications"`
	// Selected lists the outputs of those publications, sorted by path.
	Selected []PruneEntry `json:"selected"`
	// Deleted lists the outputs whose files were deleted and whose records
	// were removed (empty in a dry run).
	Deleted []PruneEntry `json:"deleted"`
	// Rebuilt lists the archive index and feed paths rewritten so that
	// they no longer link the deleted publications, sorted (empty in a dry
	// run).
	Rebuilt []string `json:"rebuilt"`
	// Warnings are things the operator should know that did not make the
	// command fail (such as a dead writer's journal at the root).
	Warnings []string `json:"warnings,omitempty"`
	RootRecovery
	Failure
}

// ReconcileState is the document `distributor reconcile-state` prints.
type ReconcileState struct {
	Target
	DryRun bool `json:"dry_run"`
	// AllOwners is true when every owner's records were checked, false when
	// only pipeline_id/destination_id's were.
	AllOwners bool   `json:"all_owners"`
	State     string `json:"state"`
	// Checked counts the records checked.
	Checked int `json:"checked"`
	// Missing lists checked records whose file is not in storage.
	Missing []Record `json:"missing"`
	// Unmanaged lists storage paths no record holds (reserved names excluded).
	Unmanaged []string `json:"unmanaged"`
	// Removed lists the records actually dropped from the catalog (empty in
	// a dry run, or when the catalog could not be written).
	Removed []Record `json:"removed"`
	// TempFiles lists the temporary files (.distributor-tmp-*) interrupted
	// writes left below the root: removed, unless this is a dry run.
	TempFiles []string `json:"temp_files"`
	// Warnings: as in Prune.
	Warnings []string `json:"warnings,omitempty"`
	RootRecovery
	Failure
}

// VerifyCorrupt is a managed output whose stored bytes differ from its record.
type VerifyCorrupt struct {
	Path          string `json:"path"`
	PipelineID    string `json:"pipeline_id"`
	DestinationID string `json:"destination_id"`
	// Expected and Actual are "sha256:<hex> (<size> bytes)".
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
}

// Verify is the document `distributor verify` prints.
type Verify struct {
	Target
	AllOwners bool `json:"all_owners"`
	// Quick says only presence and sizes were checked (verify --quick): OK
	// then counts outputs present with their recorded size, whose contents
	// were not read.
	Quick bool   `json:"quick"`
	State string `json:"state"`
	// OK counts the outputs whose stored sha256 and size match their record.
	OK      int             `json:"ok"`
	Missing []Record        `json:"missing"`
	Corrupt []VerifyCorrupt `json:"corrupt"`
	// TempFiles lists the temporary files (.distributor-tmp-*) interrupted
	// writes left below the root; the next writing command removes them.
	TempFiles []string `json:"temp_files"`
	// Warnings: as in Prune.
	Warnings []string `json:"warnings,omitempty"`
	// RecoveryPending says a dead writer's intent journal is at the root:
	// missing or corrupt outputs may be its unfinished work, which the next
	// writing command recovers.
	RecoveryPending bool `json:"recovery_pending,omitempty"`
	Failure
}

// Failed reports whether verify must exit 1: an error, or any missing or
// corrupt output.
func (v *Verify) Failed() bool { return v.Error != nil || len(v.Missing) > 0 || len(v.Corrupt) > 0 }

// StateShow is what `distributor state show` found at a root: the
// catalog's top fields here, its records and stored bytes streamed (Outputs,
// WriteRaw) from a copy of what was read, which Close releases. With
// --output json the command prints the stored document itself (null when
// there is none); the text table reads the records twice.
type StateShow struct {
	Target `json:"-"`
	// State is "none" or "catalog" (other states are errors).
	State string `json:"-"`
	// SchemaVersion, Header (the distributor that last wrote it, when it
	// was created and updated) and Count (its outputs) are the catalog's
	// top fields, set when State is "catalog".
	SchemaVersion int            `json:"-"`
	Header        catalog.Header `json:"-"`
	Count         int            `json:"-"`
	// Warnings are things the operator should know (a dead writer's
	// journal at the root); with --output json they are logged instead.
	Warnings []string `json:"-"`
	src      StateSource
}

// StateSource is where a StateShow streams its catalog from.
type StateSource interface {
	Outputs(fn func(*catalog.Output) error) error
	WriteRaw(w io.Writer) error
	Close() error
}

// Stream sets where s streams its records and stored bytes from.
func (s *StateShow) Stream(src StateSource) { s.src = src }

// Outputs calls fn for every output the catalog records, in path order,
// each a fresh Output that fn may keep (none for state none); an error
// from fn stops the pass and is returned as is. Each call reads the
// records again, in memory that does not grow with the catalog.
func (s *StateShow) Outputs(fn func(*catalog.Output) error) error {
	if s.src == nil {
		return nil
	}
	return s.src.Outputs(fn)
}

// WriteRaw writes the stored .distributor.json to w, exactly as it was
// read (nothing for state none).
func (s *StateShow) WriteRaw(w io.Writer) error {
	if s.src == nil {
		return nil
	}
	return s.src.WriteRaw(w)
}

// Close releases the copy that Outputs and WriteRaw read (for a large
// catalog, a temporary file); they read nothing after it.
func (s *StateShow) Close() error {
	if s.src == nil {
		return nil
	}
	err := s.src.Close()
	s.src = nil
	return err
}
