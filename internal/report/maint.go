package report

import (
	"io"
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
