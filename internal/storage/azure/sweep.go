package azure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Properties implements storage.Store: Azure does not stage (no cheap
// rename: a staged blob would be a server-side copy or a second upload,
// and a Put Blob is atomic already); PutIf and PutIfStream are a single
// Put Blob each; ListPage is one request; blobs are served with their
// HTTP headers; the conditions are the server's.
func (s *Store) Properties() storage.Properties {
	return storage.Properties{AtomicSmallWrites: true, ListPages: true, Metadata: true, ServerConditions: true}
}

// Stage implements storage.Store: it fails with storage.ErrNoStaging.
func (s *Store) Stage(_ context.Context, p string, _ io.Reader, _ int64, _ storage.PutOptions) (storage.Staged, error) {
	return nil, fmt.Errorf("%s: stage %s: %w", s, p, storage.ErrNoStaging)
}

// RewriteIf implements storage.Store: Azure does not rewrite (see
// Properties.Rewrite).
func (s *Store) RewriteIf(_ context.Context, p string, _ storage.Version, _ func(io.Reader, io.Writer) error) error {
	return storage.Unsupported(s, "rewrite-if", p)
}

// RemoveCreatedRoot implements storage.Store: a container has no root
// directory to remove.
func (s *Store) RemoveCreatedRoot(context.Context) (bool, error) {
	return false, storage.Unsupported(s, "remove-created-root", "")
}

// SweepTemp implements storage.Store. Azure writes leave no temporary
// blob under a name: what a writer that died while uploading a large blob
// in blocks leaves is its uncommitted blocks. Those of a name with no
// committed blob make an "uncommitted blob", unseen by readers and
// listings (Azure discards it after a week, billing it until then); those
// of an existing blob are invisible and go with its next write. SweepTemp
// finds the uncommitted blobs, anywhere below the root (opts.Dirs nil) or
// directly in the directories opts.Dirs, and unless opts.DryRun deletes
// them (not conditioned on the listed ETag: Azurite refuses If-Match on
// an uncommitted blob; the lock's holder is the only writer). It returns their paths relative to the root, sorted. Call it
// (without DryRun) only while holding the destination lock: it cannot
// tell a dead upload from one in flight.
func (s *Store) SweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	found, err := s.sweep(ctx, opts)
	if err != nil {
		return found, fmt.Errorf("%s: delete uncommitted blobs: %w", s, err)
	}
	return found, nil
}

func (s *Store) sweep(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	dirs, err := storage.CheckSweepDirs(opts.Dirs)
	if err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, os.ErrClosed
	}
	whole := opts.Dirs == nil
	if whole {
		dirs = []string{""}
	}
	var dead []storage.Info
	for _, d := range dirs {
		prefix := d
		if d != "" {
			prefix += "/"
		}
		ups, err := s.uncommitted(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, u := range ups {
			if whole || dirOf(u.Path) == d {
				dead = append(dead, u)
			}
		}
	}
	slices.SortFunc(dead, func(a, b storage.Info) int { return strings.Compare(a.Path, b.Path) })
	found := make([]string, 0, len(dead))
	for _, u := range dead {
		found = append(found, u.Path)
	}
	report := func(u storage.Info) {
		if opts.Found != nil {
			opts.Found(storage.Info{Path: u.Path, Size: u.Size})
		}
	}
	if opts.DryRun {
		for _, u := range dead {
			report(u)
		}
		return found, ctx.Err()
	}
	for _, u := range dead {
		_, err := s.client.NewBlobClient(s.key(u.Path)).Delete(ctx, nil)
		if err = explain(err); err != nil && !errors.Is(err, storage.ErrNotExist) {
			return found, fmt.Errorf("%s: %w", u.Path, err)
		}
		report(u)
	}
	return found, nil
}

// dirOf returns the directory part of a path: what precedes its last
// "/", or "" for a path at the root.
func dirOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// uncommitted lists the uncommitted blobs below the root whose paths start
// with prefix: those a listing that includes them shows and one that
// does not, made after it, does not (a blob committed in between is in
// both).
func (s *Store) uncommitted(ctx context.Context, prefix string) ([]storage.Info, error) {
	var all []storage.Info
	pager := s.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: new(s.key(prefix)),
		Include: container.ListBlobsInclude{UncommittedBlobs: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, explain(err)
		}
		all = s.appendInfos(all, page.Segment.BlobItems)
	}
	if len(all) == 0 {
		return nil, nil
	}
	committed := map[string]bool{}
	if err := s.list(ctx, prefix, func(i storage.Info) error { committed[i.Path] = true; return nil }); err != nil {
		return nil, err
	}
	var dead []storage.Info
	for _, i := range all {
		if !committed[i.Path] {
			dead = append(dead, i)
		}
	}
	return dead, nil
}
