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
	var sel []int
	for i := range c.Outputs {
		if keep == nil || keep(&c.Outputs[i]) {
			sel = append(sel, i)
		}
	}
	// One verdict per selected output, filled in by whichever worker
	// checks it, read in catalog order at the end.
	type verdict struct {
		missing bool
		corrupt *Corrupt
		err     error
	}
	verdicts := make([]verdict, len(sel))
	check := func(ctx context.Context, k int) {
		o := &c.Outputs[sel[k]]
		v := &verdicts[k]
		if opts.Sizes != nil {
			size, ok := opts.Sizes[o.Path]
			switch {
			case !ok:
				v.missing = true
			case size != o.Size:
				v.corrupt = &Corrupt{Path: o.Path, Expected: fmt.Sprintf("%s (%d bytes)", o.SHA256, o.Size),
					Actual: fmt.Sprintf("%d bytes (content not read: --quick)", size)}
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
				Expected: fmt.Sprintf("%s (%d bytes)", o.SHA256, o.Size), Actual: fmt.Sprintf("%s (%d bytes)", sum, size)}
		}
		if opts.Checked != nil {
			opts.Checked(o.Path, size)
		}
	}

	jobs := max(opts.Jobs, 1)
	if opts.Sizes != nil {
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

	res := &AuditResult{}
	var cancelled error
	for k, v := range verdicts {
		switch {
		case v.err != nil && ctx.Err() == nil && errors.Is(v.err, context.Canceled):
			cancelled = cmp.Or(cancelled, v.err) // stopped by another output's failure
		case v.err != nil:
			return nil, v.err
		case v.missing:
			res.Missing = append(res.Missing, c.Outputs[sel[k]])
		case v.corrupt != nil:
			res.Corrupt = append(res.Corrupt, *v.corrupt)
		}
	}
	if failed.Load() || ctx.Err() != nil {
		// Only cancellations were kept above: the cause was the caller's.
		return nil, cmp.Or(ctx.Err(), cancelled)
	}
	res.OK = len(sel) - len(res.Missing) - len(res.Corrupt)
	return res, nil
}
