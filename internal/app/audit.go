package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// Corrupt is a managed output whose stored bytes differ from its record.
type Corrupt struct {
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	// Owner is the record's owner.
	Owner catalog.Owner `json:"-"`
}

// AuditResult says how the records of a catalog compare with storage.
type AuditResult struct {
	OK      int
	Missing []catalog.Output
	Corrupt []Corrupt
}

// Truthful reports whether every audited record matched storage.
func (r *AuditResult) Truthful() bool { return len(r.Missing) == 0 && len(r.Corrupt) == 0 }

// AuditOptions tune AuditWith.
type AuditOptions struct {
	// Jobs is how many outputs are read and hashed at once (0 or 1: one
	// at a time).
	Jobs int
	// Sizes, when not nil, makes the audit compare only presence and size
	// with this listing (path -> size, as ReadRoot's Listing) and read no
	// content: a changed file of the recorded size passes.
	Sizes map[string]int64
	// Checked, when set, is called after each output is checked, with the
	// number of bytes read for it (0 with Sizes), from any goroutine.
	Checked func(path string, read int64)
}

// Audit re-hashes, from storage, every output of c that keep selects (nil
// selects all) and compares sha256 and size with its record, one output
// at a time.
func Audit(ctx context.Context, st storage.Store, c *catalog.Catalog, keep func(*catalog.Output) bool) (*AuditResult, error) {
	return AuditWith(ctx, st, c, keep, AuditOptions{})
}

// AuditWith is Audit with options: opts.Jobs outputs read at once, or only
// sizes compared with a listing. The result does not depend on Jobs:
// Missing and Corrupt are in catalog order. The first read error (in
// catalog order among those that failed) stops the audit and is returned.
func AuditWith(ctx context.Context, st storage.Store, c *catalog.Catalog, keep func(*catalog.Output) bool, opts AuditOptions) (*AuditResult, error) {
	quick := opts.Sizes != nil
	records := func(fn func(o *catalog.Output, l *listed) error) error {
		for i := range c.Outputs {
			o := &c.Outputs[i]
			if keep != nil && !keep(o) {
				continue
			}
			var l *listed
			if size, ok := opts.Sizes[o.Path]; ok {
				l = &listed{Path: o.Path, Size: size}
			}
			if err := fn(o, l); err != nil {
				return err
			}
		}
		return nil
	}
	return auditStream(ctx, st, records, quick, opts)
}

// auditBatch is how many records an audit checks at a time, in parallel:
// its memory follows the batch, not the catalog.
const auditBatch = 1024

// auditRecord is a record to audit, with its listing entry when the audit
// compares sizes only (nil: not listed).
type auditRecord struct {
	o *catalog.Output
	l *listed
}

// auditStream audits the records that records yields (in catalog order),
// auditBatch at a time, opts.Jobs of each batch at once: with quick, only
// their presence and size in the listing entry that comes with each (nil:
// not listed), otherwise their bytes from storage. The result is in the
// order records yields them, whatever the number of jobs.
func auditStream(ctx context.Context, st storage.Store, records func(fn func(o *catalog.Output, l *listed) error) error, quick bool, opts AuditOptions) (*AuditResult, error) {
	res := &AuditResult{}
	batch := make([]auditRecord, 0, auditBatch)
	flush := func() error {
		err := auditRecords(ctx, st, batch, quick, opts, res)
		batch = batch[:0]
		return err
	}
	err := records(func(o *catalog.Output, l *listed) error {
		batch = append(batch, auditRecord{o: o, l: l})
		if len(batch) < auditBatch {
			return nil
		}
		return flush()
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// auditRecords checks a batch of records, opts.Jobs at once, and adds
// their verdicts to res in the batch's order.
func auditRecords(ctx context.Context, st storage.Store, sel []auditRecord, quick bool, opts AuditOptions, res *AuditResult) error {
	// One verdict per selected output, filled in by whichever worker
	// checks it, read in catalog order at the end.
	type verdict struct {
		missing bool
		corrupt *Corrupt
		err     error
	}
	verdicts := make([]verdict, len(sel))
	check := func(ctx context.Context, k int) {
		o, l := sel[k].o, sel[k].l
		v := &verdicts[k]
		if quick {
			switch {
			case l == nil:
				v.missing = true
			case l.Size != o.Size:
				v.corrupt = &Corrupt{Path: o.Path, Expected: fmt.Sprintf("%s (%d bytes)", o.SHA256, o.Size),
					Actual: fmt.Sprintf("%d bytes (content not read: --quick)", l.Size), Owner: o.Owner()}
			}
			if opts.Checked != nil {
				opts.Checked(o.Path, 0)
			}
			return
		}
		sum, size, err := txn.HashObject(ctx, st, o.Path)
		switch {
		case errors.Is(err, storage.ErrNotExist):
			v.missing = true
		case err != nil:
			v.err = err
			return
		case sum != o.SHA256 || size != o.Size:
			v.corrupt = &Corrupt{Path: o.Path,
				Expected: fmt.Sprintf("%s (%d bytes)", o.SHA256, o.Size), Actual: fmt.Sprintf("%s (%d bytes)", sum, size), Owner: o.Owner()}
		}
		if opts.Checked != nil {
			opts.Checked(o.Path, size)
		}
	}

	jobs := max(opts.Jobs, 1)
	if quick {
		jobs = 1 // nothing to wait for
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(jobs, max(len(sel), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				k := int(next.Add(1) - 1)
				if k >= len(sel) {
					return
				}
				check(wctx, k)
				if verdicts[k].err != nil {
					failed.Store(true)
					stop() // the others' reads end early; their errors are not the cause
				}
			}
		}()
	}
	wg.Wait()

	var cancelled error
	for k, v := range verdicts {
		switch {
		case v.err != nil && ctx.Err() == nil && errors.Is(v.err, context.Canceled):
			cancelled = cmp.Or(cancelled, v.err) // stopped by another output's failure
		case v.err != nil:
			return v.err
		case v.missing:
			res.Missing = append(res.Missing, *sel[k].o)
		case v.corrupt != nil:
			res.Corrupt = append(res.Corrupt, *v.corrupt)
		default:
			res.OK++
		}
	}
	if failed.Load() || ctx.Err() != nil {
		// Only cancellations were kept above: the cause was the caller's.
		return cmp.Or(ctx.Err(), cancelled)
	}
	return nil
}
