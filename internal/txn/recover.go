package txn

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/storage"
)

// Recovery describes what recovering a root from a dead run's journal did.
type Recovery struct {
	Journal *journal.Journal
	// Committed: the dead run had written its catalog, so only the journal
	// (and temporary files) needed removing.
	Committed bool
	// RolledForward lists completed writes of paths that existed, now recorded.
	RolledForward []string
	// Removed lists files the dead run created, now deleted (RemovedBytes in all).
	Removed      []string
	RemovedBytes int64
	// Dropped lists records of files the dead run deleted, now removed.
	Dropped []string
	// Left lists files the dead run meant to create not holding the bytes
	// it journaled: not provably its own, so left (unmanaged).
	Left []Leftover
	// TempSwept and TempBytes count the temporary files of the whole root swept after.
	TempSwept int
	TempBytes int64
}

// LogAttrs returns the recovery as bounded log attributes (counts, first paths).
func (r *Recovery) LogAttrs(root string) []any {
	attrs := []any{"root", root, "dead_run", r.Journal.RunID, "command", r.Journal.Command,
		"started", r.Journal.Started, "committed", r.Committed}
	for _, l := range []struct {
		name  string
		paths []string
	}{{"rolled_forward", r.RolledForward}, {"removed", r.Removed}, {"dropped", r.Dropped}} {
		if len(l.paths) > 0 {
			attrs = append(attrs, l.name, fmt.Sprintf("%d (%s)", len(l.paths), Summarise(l.paths, 3)))
		}
	}
	if len(r.Left) > 0 {
		attrs = append(attrs, "left", fmt.Sprintf("%d (%s: %s)", len(r.Left), r.Left[0].Path, r.Left[0].Reason))
	}
	if len(r.Removed) > 0 {
		attrs = append(attrs, "removed_bytes", r.RemovedBytes)
	}
	return append(attrs, "temp_swept", r.TempSwept, "temp_swept_bytes", r.TempBytes)
}

// LogPaths logs every path of the recovery at debug level, one a line.
func (r *Recovery) LogPaths(logger *slog.Logger, root string) {
	for _, l := range []struct {
		name  string
		paths []string
	}{{"rolled forward", r.RolledForward}, {"removed", r.Removed}, {"dropped", r.Dropped}} {
		for _, p := range l.paths {
			logger.Debug("recovery: "+l.name, "root", root, "path", p)
		}
	}
	for _, l := range r.Left {
		logger.Debug("recovery: left", "root", root, "path", l.Path, "reason", l.Reason)
	}
}

// Recover restores the spec's invariant on a root where a run died (or lost
// its lock): the catalog is truthful and no file the dead attempt provably
// created is left unrecorded. It runs under the root's lock, checking fence
// before every change (nil: no other writer can interfere, as in tests and
// a dry run's preview). It returns nil when the root has no journal.
//
// Rules, per journaled op:
//   - a write whose bytes are in place (sha256 and size match) of a path
//     that existed before or is recorded: rolled forward into the catalog;
//   - a write of a path that did not exist before and is not recorded:
//     removed if it holds exactly the journaled bytes (the dead run's),
//     otherwise left in place and reported (it cannot be proved to be the
//     dead run's: after a power loss before a batch was synced it may be
//     cut short; it is unmanaged now);
//   - a replace whose bytes are not in place did not happen: nothing to do;
//   - a delete whose file is gone: its record is dropped.
//
// If the catalog changed since the dead run read it, that run wrote it,
// but not necessarily as its final commit: a run whose requests a signal
// cut short records its partial result and keeps the journal, and a cut
// request may land after that (docs/design.md, "Requests cut short"). So
// the rules apply to the journaled ops the catalog does not record as
// done (a write recorded with other bytes, a delete still recorded): none
// for a final commit, whose journal is only removed.
func Recover(ctx context.Context, st storage.Store, fence func() error, now time.Time) (_ *Recovery, err error) {
	defer func() { err = withCause(ctx, err) }()
	data, _, err := st.Get(ctx, journal.Name)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", journal.Name, err)
	}
	j, err := journal.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s at %s is unreadable, inspect the root by hand (see docs/operations.md): %w", journal.Name, st, err)
	}
	if fence == nil {
		fence = func() error { return nil }
	}
	rec := &Recovery{Journal: j}
	state, ver, err := ReadCatalog(ctx, st)
	if err != nil {
		return nil, err
	}
	ops := j.Ops
	if string(ver) != j.BaseVersion {
		ops = nil
		if state.Status == catalog.StatusCatalog { // (anything else is not the dead run's)
			ops = unsettled(j.Ops, state.Catalog.Index())
		}
		rec.Committed = len(ops) == 0
	}
	if err := rollForward(ctx, st, fence, state, ver, ops, now, rec); err != nil {
		return nil, err
	}
	if err := fence(); err != nil {
		return nil, err
	}
	if err := st.Delete(ctx, journal.Name); err != nil {
		return nil, fmt.Errorf("remove %s: %w", journal.Name, err)
	}
	return rec, nil
}

// unsettled returns the ops of a journal whose outcome a catalog idx does
// not record: a write whose record names other bytes (or is missing), a
// delete whose record is still there.
func unsettled(ops []journal.Op, idx map[string]*catalog.Output) []journal.Op {
	return slices.DeleteFunc(slices.Clone(ops), func(op journal.Op) bool {
		r := idx[op.Path]
		if op.Op == journal.OpDelete {
			return r == nil
		}
		return r != nil && r.SHA256 == op.SHA256 && r.Size == op.Size
	})
}

func rollForward(ctx context.Context, st storage.Store, fence func() error, state catalog.State, ver storage.Version,
	ops []journal.Op, now time.Time, rec *Recovery) error {
	if len(ops) == 0 {
		return nil
	}
	t := now.UTC().Truncate(time.Second)
	next := &catalog.Catalog{SchemaVersion: catalog.SchemaVersion, CreatedAt: t, UpdatedAt: t}
	if state.Status == catalog.StatusCatalog {
		next = state.Catalog.Clone()
	}
	idx := next.Index()
	var keep []catalog.Output
	drop := map[string]bool{}
	for _, op := range ops {
		switch op.Op {
		case journal.OpWrite:
			sum, size, err := HashObject(ctx, st, op.Path)
			completed, prev := err == nil && sum == op.SHA256 && size == op.Size, idx[op.Path]
			switch {
			case errors.Is(err, storage.ErrNotExist):
			case err != nil:
				return err
			case op.Existed && !completed: // the replace did not happen: the old bytes are there
			case completed && (prev != nil || op.Existed):
				r := *op.Record
				if prev != nil {
					r.CreatedAt = prev.CreatedAt
				}
				drop[op.Path] = true
				keep = append(keep, r)
				rec.RolledForward = append(rec.RolledForward, op.Path)
			case !completed:
				rec.Left = append(rec.Left, Leftover{op.Path, "its bytes are not the ones the dead run journaled: left alone, unmanaged"})
			default:
				if err := fence(); err != nil {
					return err
				}
				if err := st.Delete(ctx, op.Path); err != nil {
					return fmt.Errorf("remove %s created by the dead run: %w", op.Path, err)
				}
				rec.Removed = append(rec.Removed, op.Path)
				rec.RemovedBytes += size
			}
		case journal.OpDelete:
			switch _, err := st.Stat(ctx, op.Path); {
			case err != nil && !errors.Is(err, storage.ErrNotExist):
				return err
			case err == nil: // still there: the delete did not happen
			case idx[op.Path] != nil:
				drop[op.Path] = true
				rec.Dropped = append(rec.Dropped, op.Path)
			}
		}
	}
	if len(drop) == 0 {
		return nil // nothing rolled forward or dropped
	}
	next.Outputs = append(slices.DeleteFunc(next.Outputs, func(o catalog.Output) bool { return drop[o.Path] }), keep...)
	next.UpdatedAt = t
	data, err := catalog.Encode(next)
	if err != nil {
		return fmt.Errorf("recovered catalog: %w", err)
	}
	if err := fence(); err != nil {
		return err
	}
	if _, err := storage.PutIf(ctx, st, catalog.FileName, data, ver); err != nil {
		return fmt.Errorf("write recovered %s: %w", catalog.FileName, err)
	}
	return nil
}

// RunID returns a random id naming one attempt in journals and logs.
func RunID() string {
	b := make([]byte, 8)
	rand.Read(b) // (it never fails)
	return hex.EncodeToString(b)
}

// HashObject streams an object and returns its "sha256:<hex>" digest and size.
func HashObject(ctx context.Context, st storage.Store, path string) (string, int64, error) {
	rc, err := st.Open(ctx, path)
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	h := sha256.New()
	n, err := storage.Hash(ctx, h, rc)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	return bundle.FormatSHA256(h.Sum(nil)), n, nil
}

// ReadCatalog reads a root's catalog and classifies it; one that is not a
// regular object (a directory, a symbolic link) is invalid, never none.
func ReadCatalog(ctx context.Context, st storage.Store) (catalog.State, storage.Version, error) {
	data, ver, err := st.Get(ctx, catalog.FileName)
	switch {
	case errors.Is(err, storage.ErrNotObject):
		return catalog.State{Status: catalog.StatusInvalid,
			Problem: fmt.Errorf("%s is not a regular file: %w", catalog.FileName, err)}, "", nil
	case errors.Is(err, storage.ErrNotExist):
		return catalog.Read(nil), "", nil
	case err != nil:
		return catalog.State{}, "", err // the store's error names the root and the file
	}
	return catalog.Read(data), ver, nil
}
