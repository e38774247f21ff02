package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/storage"
)

// Recovery describes what recovering a root from a dead run's journal did.
type Recovery struct {
	Journal *journal.Journal
	// Committed is true when the dead run had written its catalog: only the
	// journal (and temporary files) needed removing.
	Committed bool
	// RolledForward lists completed writes of paths that existed before,
	// now recorded.
	RolledForward []string
	// Removed lists files the dead run created, now deleted.
	Removed []string
	// Dropped lists records of files the dead run deleted, now removed.
	Dropped []string
	// TempSwept counts temporary files removed.
	TempSwept int
}

// tempSweeper is implemented by stores that can leave temporary files
// behind when a process dies mid-write.
type tempSweeper interface {
	SweepTemp(ctx context.Context) (int, error)
}

// Recover restores the spec's invariant on a root where a run died: the
// catalog is truthful and no file the dead attempt created is left
// unrecorded. It must run under the root's lock. It returns nil when the
// root has no journal.
//
// Rules, per journaled op:
//   - a write whose bytes are in place (sha256 and size match) of a path
//     that existed before or is recorded: rolled forward into the catalog;
//   - a write of a path that did not exist before and is not recorded: any
//     file there is the dead run's (complete, or cut short by a power loss
//     before its batch was synced) and is removed;
//   - a replace whose bytes are not in place did not happen: nothing to do;
//   - a delete whose file is gone: its record is dropped.
//
// If the catalog changed since the dead run read it, that run committed
// its catalog (which already describes its writes), and only the journal
// and temporary files are removed.
func Recover(ctx context.Context, st storage.Store, now time.Time) (*Recovery, error) {
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
	rec := &Recovery{Journal: j}
	root, err := ReadRoot(ctx, st)
	if err != nil {
		return nil, err
	}
	if string(root.Version) != j.BaseVersion {
		rec.Committed = true
	} else if err := rollForward(ctx, st, root, j, now, rec); err != nil {
		return nil, err
	}
	if sw, ok := st.(tempSweeper); ok {
		n, err := sw.SweepTemp(ctx)
		if err != nil {
			return nil, fmt.Errorf("sweep temporary files: %w", err)
		}
		rec.TempSwept = n
	}
	if err := st.Delete(ctx, journal.Name); err != nil {
		return nil, fmt.Errorf("remove %s: %w", journal.Name, err)
	}
	return rec, nil
}

func rollForward(ctx context.Context, st storage.Store, root *Root, j *journal.Journal, now time.Time, rec *Recovery) error {
	var base *catalog.Catalog
	if root.State.Status == catalog.StatusCatalog {
		base = root.State.Catalog.Clone()
	}
	next := base
	if next == nil {
		t := now.UTC().Truncate(time.Second)
		next = &catalog.Catalog{SchemaVersion: catalog.SchemaVersion, CreatedAt: t, UpdatedAt: t}
	}
	idx := next.Index()
	changed := false
	var keep []catalog.Output
	drop := map[string]bool{}
	for _, op := range j.Ops {
		switch op.Op {
		case journal.OpWrite:
			sum, size, err := hashObject(ctx, st, op.Path)
			if errors.Is(err, storage.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			completed := sum == op.SHA256 && size == op.Size
			prev := idx[op.Path]
			if op.Existed && !completed {
				continue // the replace did not happen: the old bytes are there
			}
			if completed && (prev != nil || op.Existed) {
				r := *op.Record
				if prev != nil {
					r.CreatedAt = prev.CreatedAt
				}
				drop[op.Path] = true
				keep = append(keep, r)
				rec.RolledForward = append(rec.RolledForward, op.Path)
				changed = true
				continue
			}
			// The path did not exist when the dead run planned (and was not
			// recorded, or its record was already stale) and no one else
			// writes under the lock: whatever is there now (complete, or cut
			// short by a power loss before its Sync) is that run's.
			if err := st.Delete(ctx, op.Path); err != nil {
				return fmt.Errorf("remove %s created by the dead run: %w", op.Path, err)
			}
			rec.Removed = append(rec.Removed, op.Path)
		case journal.OpDelete:
			if _, err := st.Stat(ctx, op.Path); !errors.Is(err, storage.ErrNotExist) {
				if err != nil {
					return err
				}
				continue // still there: the delete did not happen
			}
			if idx[op.Path] != nil {
				drop[op.Path] = true
				rec.Dropped = append(rec.Dropped, op.Path)
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	out := next.Outputs[:0:0]
	for _, o := range next.Outputs {
		if !drop[o.Path] {
			out = append(out, o)
		}
	}
	next.Outputs = append(out, keep...)
	next.UpdatedAt = now.UTC().Truncate(time.Second)
	data, err := catalog.Encode(next)
	if err != nil {
		return fmt.Errorf("recovered catalog: %w", err)
	}
	if _, err := st.PutIf(ctx, catalog.FileName, data, root.Version); err != nil {
		return fmt.Errorf("write recovered %s: %w", catalog.FileName, err)
	}
	return nil
}
