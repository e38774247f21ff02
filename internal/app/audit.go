package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/report"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// AuditOptions tune an audit.
type AuditOptions struct {
	Jobs int // outputs read and hashed at once (0 or 1: one at a time)
	// Checked, when set, is called from any goroutine after each output,
	// with the bytes read (0 when only sizes are compared).
	Checked func(path string, read int64)
}

// auditBatch records are checked at a time: memory follows it, not the catalog.
const auditBatch = 1024

// auditRecord has a listing entry l when only sizes are compared (nil: not listed).
type auditRecord struct {
	o *catalog.Output
	l *listed
}

// auditStream audits what records yields into res (OK, Missing, Corrupt),
// auditBatch at a time (with quick only listed sizes, else the bytes), in
// its order whatever the jobs.
func auditStream(ctx context.Context, st storage.Store, records func(fn func(o *catalog.Output, l *listed) error) error,
	quick bool, opts AuditOptions, res *report.Verify) error {
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
	return err
}

// auditRecords checks a batch, opts.Jobs at once, adding verdicts to res in order.
func auditRecords(ctx context.Context, st storage.Store, sel []auditRecord, quick bool, opts AuditOptions, res *report.Verify) error {
	type verdict struct {
		missing bool
		corrupt *report.VerifyCorrupt
		err     error
	}
	verdicts := make([]verdict, len(sel))
	check := func(ctx context.Context, k int) error {
		o, v := sel[k].o, &verdicts[k]
		actual, read := "", int64(0)
		if l := sel[k].l; quick {
			switch {
			case l == nil:
				v.missing = true
			case l.Size != o.Size:
				actual = fmt.Sprintf("%d bytes (content not read: --quick)", l.Size)
			}
		} else {
			sum, size, err := txn.HashObject(ctx, st, o.Path)
			switch {
			case errors.Is(err, storage.ErrNotExist):
				v.missing = true
			case err != nil:
				v.err = err
				return err
			case sum != o.SHA256 || size != o.Size:
				actual = fmt.Sprintf("%s (%d bytes)", sum, size)
			}
			read = size
		}
		if actual != "" {
			v.corrupt = &report.VerifyCorrupt{Record: report.RecordOf(o), Expected: fmt.Sprintf("%s (%d bytes)", o.SHA256, o.Size), Actual: actual}
		}
		if opts.Checked != nil {
			opts.Checked(o.Path, read)
		}
		return nil
	}

	jobs := opts.Jobs
	if quick {
		jobs = 1 // nothing to wait for
	}
	// After the first failure the others' reads end early (parallel
	// cancels them): their errors are not the cause.
	failed := parallel(ctx, jobs, len(sel), check) != nil
	var cancelled error
	for k, v := range verdicts {
		switch {
		case v.err != nil && ctx.Err() == nil && errors.Is(v.err, context.Canceled):
			cancelled = cmp.Or(cancelled, v.err) // stopped by another output's failure
		case v.err != nil:
			return v.err
		case v.missing:
			res.Missing = append(res.Missing, report.RecordOf(sel[k].o))
		case v.corrupt != nil:
			res.Corrupt = append(res.Corrupt, *v.corrupt)
		default:
			res.OK++
		}
	}
	if failed || ctx.Err() != nil {
		// Only cancellations were kept above: the cause was the caller's.
		return cmp.Or(ctx.Err(), cancelled)
	}
	return nil
}
