package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/plan"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// lookupLimit is how many lookups a run makes before it lists (lookUp).
const lookupLimit = 64

// planRequest is what a run plans: its outputs, owner and workflow.
type planRequest struct {
	outputs  []plan.Output
	owner    catalog.Owner
	workflow string
	force    bool
	props    storage.Properties // of the store written to, not of a view (a recovery preview's overlay)
	jobs     int
	reports  func(*catalog.Output) // when set, sees every record (reportCollector)
}

// readPlanRoot reads what a run plans from at a cost that follows the plan:
// the catalog streams once, keeping the records the plan needs (plan.Wants),
// and storage is asked only about unrecorded planned paths and their parents
// (plan.Lookups). The whole root is listed only without a valid catalog, with
// --force, or when so many paths are new that one listing is cheaper.
func readPlanRoot(ctx context.Context, st storage.Store, req planRequest) (*RootState, error) {
	r := &RootState{Store: st, ReadAt: time.Now()}
	scan := true
	if req.props.Directories {
		// An object store (S3) skips this: it has no directories to
		// mistake for the catalog, a missing catalog is the read's 404, and
		// catalogUnchanged compares the read's ETag, not a listing entry.
		info, err := st.Stat(ctx, catalog.FileName)
		switch {
		case err == nil:
			r.CatalogInfo = info
		case errors.Is(err, storage.ErrNotExist):
			scan = false // absent, or not an object: ReadCatalog classifies
		default:
			return nil, fmt.Errorf("stat %s at %s: %w", catalog.FileName, st, err)
		}
	}
	var err error
	if scan {
		if err := r.scanCatalog(ctx, req); err != nil {
			return nil, err
		}
	} else if r.State, r.Version, err = txn.ReadCatalog(ctx, st); err != nil {
		return nil, err
	}
	if r.State.Status == catalog.StatusCatalog && !req.force {
		if looked, err := r.lookUp(ctx, req); err != nil {
			return nil, err
		} else if looked {
			return r, nil // Pending is unknown: see journalPresent
		}
	}
	r.Listing = map[string]int64{}
	err = st.List(ctx, "", func(info storage.Info) error {
		r.Listing[info.Path] = info.Size
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", st, err)
	}
	_, r.Pending = r.Listing[journal.Name]
	if _, locked := r.Listing[lock.Name]; locked && !r.Pending {
		if r.Pending, err = recordOrJournal(ctx, st); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Close releases the copy of the catalog a run kept, if any.
func (r *RootState) Close() {
	if r != nil && r.CatalogCopy != nil {
		r.CatalogCopy.Close()
		r.CatalogCopy = nil
	}
}

// journalPresent says whether a recovery is pending: .distributor.journal, or
// a lock record carrying an intent. A store that lists a page in one request
// (S3) lists the reserved names once, reading the lock only when listed.
func journalPresent(ctx context.Context, st storage.Store) (bool, error) {
	if st.Properties().ListPages {
		infos, complete, err := st.ListPage(ctx, txn.ReservedPrefix, txn.ReservedPage)
		if err != nil {
			return false, fmt.Errorf("list %s* at %s: %w", txn.ReservedPrefix, st, err)
		}
		listed := func(name string) bool {
			return slices.ContainsFunc(infos, func(i storage.Info) bool { return i.Path == name })
		}
		switch {
		case complete && listed(journal.Name):
			return true, nil
		case complete && !listed(lock.Name):
			return false, nil
		}
	}
	return recordOrJournal(ctx, st)
}

// recordOrJournal reads the lock record, then the journal: whoever moves a
// record's intent creates the journal before it deletes the record, so in
// this order no move goes unseen.
func recordOrJournal(ctx context.Context, st storage.Store) (bool, error) {
	info, _, err := lock.Read(ctx, st)
	switch {
	case err == nil && len(info.Intent) > 0:
		return true, nil
	case err != nil && !errors.Is(err, storage.ErrNotExist):
		return false, fmt.Errorf("read %s at %s: %w", lock.Name, st, err)
	}
	_, err = st.Stat(ctx, journal.Name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, storage.ErrNotExist) && !errors.Is(err, storage.ErrNotObject):
		return false, nil
	}
	return false, fmt.Errorf("stat %s at %s: %w", journal.Name, st, err)
}

// scanCatalog streams the catalog, keeping the records req needs.
func (r *RootState) scanCatalog(ctx context.Context, req planRequest) error {
	keep := plan.Wants(req.outputs, req.owner, req.workflow)
	known := &plan.Known{Records: map[string]*catalog.Output{}}
	// On S3, note which parent keys of planned paths have records below (lookUp).
	var candidates, recordedDirs map[string]bool
	if !req.props.Directories {
		candidates, recordedDirs = map[string]bool{}, map[string]bool{}
		for i := range req.outputs {
			for d := plan.Parent(req.outputs[i].Path); d != "" && !candidates[d]; d = plan.Parent(d) {
				candidates[d] = true
			}
		}
	}
	// A copy of the catalog to write the next one from is kept, except where
	// the store rewrites it in one pass over its current bytes (local disk).
	s, ver, c, err := streamCatalog(ctx, r.Store, !req.props.Rewrite, func(o *catalog.Output) error {
		if keep(o) {
			kept := *o // o is reused for the next record (ScanCanonical)
			known.Records[o.Path] = &kept
		}
		if len(candidates) > 0 {
			for d := plan.Parent(o.Path); d != "" && !recordedDirs[d]; d = plan.Parent(d) {
				if candidates[d] {
					recordedDirs[d] = true
				}
			}
		}
		if req.reports != nil {
			req.reports(o)
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.State, r.Version = s, ver
	if c != nil {
		known.Header, known.Count = c.Header, c.Count
		r.Known, r.CatalogCopy, r.CatalogCanonical, r.recordedDirs = known, c.copy, c.canonical, recordedDirs
	} else if s.Catalog != nil { // valid, but unsorted: read whole
		r.Known = plan.KnownFrom(s.Catalog)
		if req.reports != nil {
			for i := range s.Catalog.Outputs {
				req.reports(&s.Catalog.Outputs[i])
			}
		}
		r.State.Catalog = nil
	}
	return nil
}

// lookUp asks storage, in parallel, about each unrecorded planned path (an
// object there or unrecorded ones below) and their parents (an object where a
// directory must be): the partial listing the plan decides from. It looks
// only if that beats one listing (looked).
//
// On S3 a parent key needs looking up only if no recorded output lies below
// it: that output's run looked, and a later object at the parent key is another
// key, not overwritten. With Properties.ListPages, one listing per top-most
// parent key the catalog does not vouch for answers the rest (cover).
func (r *RootState) lookUp(ctx context.Context, req planRequest) (looked bool, err error) {
	paths, parents := plan.Lookups(req.outputs, r.Known)
	// Lookups beat one listing up to lookupLimit, or under a hundredth of
	// the records (S3 lists about a thousand per request).
	if n := len(paths) + len(parents); n > lookupLimit && n > r.Known.Count/100 {
		return false, nil
	}
	r.Listing, r.Partial = map[string]int64{}, true
	var mu sync.Mutex
	found := func(info storage.Info) {
		mu.Lock()
		r.Listing[info.Path] = info.Size
		mu.Unlock()
	}
	if !req.props.Directories && r.recordedDirs != nil {
		parents = slices.DeleteFunc(parents, func(d string) bool { return r.recordedDirs[d] })
		if r.Store.Properties().ListPages {
			paths, parents = r.cover(ctx, req.jobs, paths, found)
		}
	}
	// below reports p and what lies below it, up to the first unrecorded
	// object below p: that one is enough to block p.
	errStop := errors.New("stop")
	below := func(ctx context.Context, prefix, p string) error {
		err := r.Store.List(ctx, prefix, func(info storage.Info) error {
			if info.Path != p && !strings.HasPrefix(info.Path, p+"/") {
				return nil
			}
			found(info)
			if info.Path != p && r.Known.Records[info.Path] == nil {
				return errStop
			}
			return nil
		})
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	}
	stat := func(ctx context.Context, p string) (bool, error) {
		info, err := r.Store.Stat(ctx, p)
		switch {
		case err == nil:
			found(info)
			return false, nil
		case errors.Is(err, storage.ErrNotObject):
			return true, nil // a directory (or link)
		case errors.Is(err, storage.ErrNotExist):
			return false, nil
		}
		return false, err
	}
	err = parallel(ctx, req.jobs, len(paths)+len(parents), func(ctx context.Context, i int) error {
		if i >= len(paths) {
			_, err := stat(ctx, parents[i-len(paths)])
			return err
		}
		p := paths[i]
		if !req.props.Directories {
			return below(ctx, p, p) // the object and anything below it
		}
		dir, err := stat(ctx, p)
		if err != nil || !dir {
			return err
		}
		// Unmanaged non-object content at a planned path, listed as List does.
		found(storage.Info{Path: p + "/", Dir: true})
		return below(ctx, p+"/", p)
	})
	if err != nil {
		return false, fmt.Errorf("look up planned paths at %s: %w", r.Store, err)
	}
	return true, nil
}

// coverPage is a covering listing's page: a prefix with more is looked up key by key.
const coverPage = 100

// cover answers paths' lookups on S3 with one bounded listing per top-most
// parent key not in r.recordedDirs (or per path), reporting through found. It
// returns the paths and parents no listing answered, to look up key by key.
func (r *RootState) cover(ctx context.Context, jobs int, paths []string, found func(storage.Info)) (restPaths, restParents []string) {
	groups := map[string][]string{}
	var prefixes []string
	for _, p := range paths {
		c := p
		for d := plan.Parent(p); d != "" && !r.recordedDirs[d]; d = plan.Parent(d) {
			c = d
		}
		if groups[c] == nil {
			prefixes = append(prefixes, c)
		}
		groups[c] = append(groups[c], p)
	}
	var mu sync.Mutex
	failed := parallel(ctx, jobs, len(prefixes), func(ctx context.Context, k int) error {
		c := prefixes[k]
		infos, complete, err := r.Store.ListPage(ctx, c, coverPage)
		if err == nil && complete {
			want := map[string]bool{}
			for _, p := range groups[c] {
				want[p] = true
				for d := plan.Parent(p); d != "" && !r.recordedDirs[d]; d = plan.Parent(d) {
					want[d] = true
				}
			}
			for _, info := range infos {
				if want[info.Path] {
					found(info)
					continue
				}
				for _, p := range groups[c] {
					if strings.HasPrefix(info.Path, p+"/") {
						found(info)
						break
					}
				}
			}
			return nil
		}
		mu.Lock()
		restPaths = append(restPaths, groups[c]...)
		mu.Unlock()
		return nil
	})
	if failed != nil {
		restPaths = paths // the key-by-key lookups report the error
	}
	seen := map[string]bool{} // their parent keys not in r.recordedDirs, sorted, once
	for _, p := range restPaths {
		for d := plan.Parent(p); d != "" && !seen[d]; d = plan.Parent(d) {
			seen[d] = true
			if !r.recordedDirs[d] {
				restParents = append(restParents, d)
			}
		}
	}
	slices.Sort(restParents)
	return restPaths, restParents
}

// parallel runs fn for 0..n-1 on up to jobs goroutines; after the first error,
// returned, nothing new starts and ctx is cancelled for those in flight.
func parallel(ctx context.Context, jobs, n int, fn func(context.Context, int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	for range min(max(jobs, 1), n) {
		g.Go(func() error {
			for i := int(next.Add(1) - 1); i < n && gctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := fn(gctx, i); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return cmp.Or(g.Wait(), ctx.Err())
}
