// Listings (whole and one page), and the sweep of incomplete uploads.

package s3

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/minio/minio-go/v7"
)

// List implements storage.Store (ListObjectsV2, recursive, paginated by
// the client). S3 lists keys in UTF-8 binary order, which is byte-wise
// order; the store checks it. Temporary objects and "directory marker"
// keys ending in "/" are skipped. If fn returns an error, List stops and
// returns that error unwrapped.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return storage.ListResult(s.list(ctx, prefix, fn), func(err error) error {
		return s.errorf("list", strconv.Quote(prefix), err)
	})
}

func (s *Store) list(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	if _, _, err := splitPrefix(prefix); err != nil {
		return err
	}
	if s.closed.Load() {
		return os.ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the client's listing goroutine
	// S3 lists keys in byte-wise order, but some compatible servers list
	// them in another (rclone serve s3: by modification time). The listing
	// is collected whole, sorted if it needs to be, and then handed to fn:
	// a complete listing in any order is fine; one that names a key twice
	// is not (it could not be trusted to be complete either).
	var infos []storage.Info
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.key(prefix), Recursive: true}) {
		if obj.Err != nil {
			return explain(obj.Err)
		}
		rel, ok := strings.CutPrefix(obj.Key, s.keyPrefix)
		if !ok || rel == "" || strings.HasSuffix(rel, "/") || storage.IsTemp(rel) {
			continue
		}
		infos = append(infos, storage.Info{Path: rel, Size: obj.Size, ModTime: obj.LastModified, Version: etagVersion(obj.ETag)})
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	infos, err := storage.SortListing(infos)
	if err != nil {
		return err
	}
	for _, info := range infos {
		if err := fn(info); err != nil {
			return &storage.CallbackError{Err: err}
		}
	}
	return nil
}

// ListPage implements storage.Store: one ListObjectsV2 request for up
// to max+1 keys below the root starting with prefix. It returns at most
// max objects, sorted (temporary objects and directory markers skipped),
// and complete when the server had no more.
func (s *Store) ListPage(ctx context.Context, prefix string, max int) ([]storage.Info, bool, error) {
	infos, complete, err := s.listPage(ctx, prefix, max)
	if err != nil {
		return nil, false, s.errorf("list", strconv.Quote(prefix), err)
	}
	return infos, complete, nil
}

func (s *Store) listPage(ctx context.Context, prefix string, max int) ([]storage.Info, bool, error) {
	if _, _, err := splitPrefix(prefix); err != nil {
		return nil, false, err
	}
	if s.closed.Load() {
		return nil, false, os.ErrClosed
	}
	if max < 1 || max > 999 {
		return nil, false, fmt.Errorf("page size %d: want 1 to 999", max)
	}
	fetchOwner := false
	var infos []storage.Info
	seen := 0
	// One page of max+1 keys: the iterator asks for the next page only if
	// it is consumed past this one, and it is not.
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.key(prefix), Recursive: true,
		MaxKeys: max + 1, FetchOwner: &fetchOwner}) {
		if obj.Err != nil {
			return nil, false, explain(obj.Err)
		}
		if seen++; seen > max {
			infos, err := storage.SortListing(infos)
			return infos, false, err
		}
		rel, ok := strings.CutPrefix(obj.Key, s.keyPrefix)
		if !ok || rel == "" || strings.HasSuffix(rel, "/") || storage.IsTemp(rel) {
			continue
		}
		infos = append(infos, storage.Info{Path: rel, Size: obj.Size, ModTime: obj.LastModified, Version: etagVersion(obj.ETag)})
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	infos, err := storage.SortListing(infos)
	return infos, err == nil, err
}

// Sync implements storage.Store. A Put is durable when the server answers
// it, so it does nothing.
func (s *Store) Sync(ctx context.Context) error { return nil }

// SweepTemp implements storage.Store. S3 writes leave no temporary object
// under a name: the temporary objects are the incomplete multipart uploads
// below the root, which a process that died while uploading a large object
// leaves behind (S3 keeps and bills their parts, unseen by listings). It
// finds them, anywhere below the root (opts.Dirs nil) or for keys directly
// in the directories opts.Dirs (the key's part up to its last "/", relative
// to the root), and unless opts.DryRun aborts them. It returns their keys
// relative to the root, sorted, one entry per upload (on an error, those
// found, and not aborted, so far included). An entry of opts.Dirs that is
// not "" or a valid path fails with storage.ErrInvalidPath. Call it
// (without DryRun) only while holding the destination lock, as part of
// crash recovery: it cannot tell a dead upload from one in flight.
func (s *Store) SweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	found, err := s.sweep(ctx, opts)
	if err != nil {
		return found, fmt.Errorf("%s: abort incomplete uploads: %w", s, err)
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// One listing of the whole root, or one per directory asked for (its
	// keys start with the directory's prefix, and the listing goes below).
	whole := opts.Dirs == nil
	if whole {
		dirs = []string{""}
	}
	type upload struct{ rel, key, id string }
	var uploads []upload
	for _, d := range dirs {
		prefix := d
		if d != "" {
			prefix += "/"
		}
		ups, err := s.listUploads(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, u := range ups {
			rel, ok := strings.CutPrefix(u.Key, s.keyPrefix)
			if !ok || !whole && keyDir(rel) != d {
				continue
			}
			uploads = append(uploads, upload{rel, u.Key, u.UploadID})
		}
	}
	slices.SortFunc(uploads, func(a, b upload) int { return cmp.Or(cmp.Compare(a.rel, b.rel), cmp.Compare(a.id, b.id)) })
	found := make([]string, 0, len(uploads))
	for _, u := range uploads {
		found = append(found, u.rel)
	}
	report := func(u upload) {
		if opts.Found != nil {
			opts.Found(storage.Info{Path: u.rel}) // the parts' size is not listed
		}
	}
	if opts.DryRun {
		for _, u := range uploads {
			report(u)
		}
		return found, nil
	}
	core := minio.Core{Client: s.client}
	for _, u := range uploads {
		if err := ctx.Err(); err != nil {
			return found, err
		}
		if err := core.AbortMultipartUpload(ctx, s.bucket, u.key, u.id); err != nil {
			if resp := minio.ToErrorResponse(err); resp.Code != "NoSuchUpload" {
				return found, fmt.Errorf("%s: %w", u.key, explain(err))
			}
		}
		report(u)
	}
	return found, nil
}

// keyDir returns the directory part of a key relative to the root: what
// precedes its last "/", or "" for a key at the root.
func keyDir(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// listUploads lists the incomplete multipart uploads whose keys start with
// the root's key prefix followed by prefix.
func (s *Store) listUploads(ctx context.Context, prefix string) ([]minio.ObjectMultipartInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the client's listing goroutine
	var uploads []minio.ObjectMultipartInfo
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, s.key(prefix), true) {
		if u.Err != nil {
			// The listing looks at each upload's parts; an upload that went
			// away meanwhile (finished or aborted) is what a sweep wants.
			if minio.ToErrorResponse(u.Err).Code == "NoSuchUpload" {
				continue
			}
			return nil, explain(u.Err)
		}
		uploads = append(uploads, u)
	}
	return uploads, ctx.Err()
}
