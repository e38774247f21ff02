package gcs

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
)

// noGeneration is the ifGenerationMatch of a Version that is not a
// generation (the up-front proof's mismatch is one): a generation no
// object reaches (GCS counts microseconds since 1970), so that the server,
// not this process, refuses the write, and the proof tests the server.
const noGeneration = math.MaxInt64

// Put implements storage.Store: one upload (see the package
// documentation); PutCreate sends ifGenerationMatch=0, which the server
// refuses with 412 (an error matching storage.ErrPrecondition) when the
// object exists; PutIfVersion sends ifGenerationMatch=0 for the zero
// Version and ifGenerationMatch=<generation> for another.
func (s *Store) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	var (
		v   storage.Version
		err error
	)
	switch opts.Mode {
	case storage.PutIfVersion:
		v, err = s.putIfVersion(ctx, p, r, size, opts.Version)
	case storage.PutCreate:
		_, err = s.upload(ctx, p, r, size, "0", opts.Metadata)
	default:
		_, err = s.upload(ctx, p, r, size, "", opts.Metadata)
	}
	if err != nil {
		return "", s.errorf(opts.Mode.Op(), p, err)
	}
	return v, nil
}

// putIfVersion is a PutIfVersion Put: r must seek (a retry rewinds it).
func (s *Store) putIfVersion(ctx context.Context, p string, r io.Reader, size int64, ifVersion storage.Version) (storage.Version, error) {
	rs, err := storage.Seekable(r)
	if err != nil {
		return "", err
	}
	gen := "0"
	if ifVersion != "" {
		gen = strconv.FormatInt(noGeneration, 10)
		if n, err := strconv.ParseInt(string(ifVersion), 10, 64); err == nil && n > 0 {
			gen = string(ifVersion)
		}
	}
	v, err := s.putIf(ctx, p, rs, size, gen)
	if err != nil && errors.Is(err, storage.ErrPrecondition) {
		if ifVersion == "" {
			err = fmt.Errorf("%w: object exists", storage.ErrPrecondition)
		} else {
			err = fmt.Errorf("%w: the object is absent or its generation is not %s", storage.ErrPrecondition, ifVersion)
		}
	}
	return v, err
}

func (s *Store) putIf(ctx context.Context, p string, r io.ReadSeeker, size int64, gen string) (storage.Version, error) {
	if err := s.begin(ctx, p); err != nil {
		return "", err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind the input: %w", err)
	}
	return s.upload(ctx, p, r, size, gen, storage.Metadata{})
}

// upload sends one multipart upload of exactly size bytes of r to the
// object at p, with md and, unless gen is "", ifGenerationMatch=gen. It
// returns the new object's generation.
func (s *Store) upload(ctx context.Context, p string, r io.Reader, size int64, gen string, md storage.Metadata) (storage.Version, error) {
	if err := s.begin(ctx, p); err != nil {
		return "", err
	}
	er, err := storage.NewExactReader(ctx, r, size)
	if err != nil {
		return "", err
	}
	if md.ContentType == "" {
		md.ContentType = storage.ContentType(p)
	}
	if strings.ContainsAny(md.ContentType, "\r\n") {
		return "", fmt.Errorf("content type %q: a line break", md.ContentType)
	}
	meta, err := json.Marshal(struct {
		Name               string `json:"name"`
		ContentType        string `json:"contentType"`
		CacheControl       string `json:"cacheControl,omitempty"`
		ContentDisposition string `json:"contentDisposition,omitempty"`
	}{s.key(p), md.ContentType, md.CacheControl, md.ContentDisposition})
	if err != nil {
		return "", err
	}
	boundary := rand.Text()
	head := "--" + boundary + "\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n" + string(meta) +
		"\r\n--" + boundary + "\r\nContent-Type: " + md.ContentType + "\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	q := url.Values{"uploadType": {"multipart"}, "fields": {"generation"}}
	if gen != "" {
		q.Set("ifGenerationMatch", gen)
	}
	// The body is no *bytes.Reader or the like: the client cannot rewind
	// it, so it never sends it twice.
	body := io.NopCloser(io.MultiReader(strings.NewReader(head), er, strings.NewReader(tail)))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.uploads+"?"+q.Encode(), body)
	if err != nil {
		return "", err
	}
	req.ContentLength = int64(len(head)) + size + int64(len(tail))
	req.Header.Set("Content-Type", "multipart/related; boundary="+boundary)
	resp, err := s.send(req)
	if er.Err() != nil {
		return "", er.Err() // the reader's failure is the cause, whatever the client made of it
	}
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var obj struct{ Generation string }
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil {
		return "", fmt.Errorf("the server's answer: %w", err)
	}
	if er.Left() != 0 {
		return "", fmt.Errorf("the client sent %d of %d bytes", size-er.Left(), size)
	}
	if obj.Generation == "" {
		return "", errors.New("the server returned no generation")
	}
	return storage.Version(obj.Generation), nil
}

// getMedia starts one download of the object at p and returns its body
// and generation.
func (s *Store) getMedia(ctx context.Context, p string) (io.ReadCloser, storage.Version, error) {
	if err := s.begin(ctx, p); err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.objectURL(p, url.Values{"alt": {"media"}}), nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := s.send(req)
	if err != nil {
		return nil, "", err
	}
	gen := resp.Header.Get("X-Goog-Generation")
	if gen == "" {
		resp.Body.Close()
		return nil, "", errors.New("the server returned no generation (X-Goog-Generation)")
	}
	return resp.Body, storage.Version(gen), nil
}

// Get implements storage.Store: one download, with the generation of the
// same answer as its Version.
func (s *Store) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	var data []byte
	v, err := s.ReadVersioned(ctx, p, func(r io.Reader) (err error) {
		if data, err = io.ReadAll(r); err != nil {
			err = s.errorf("get", p, err)
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return data, v, nil
}

// ReadVersioned implements storage.Store: one download, whose answer's
// generation is the Version (so it describes the bytes streamed, even if
// the object is replaced meanwhile). What fn leaves unread is drained.
func (s *Store) ReadVersioned(ctx context.Context, p string, fn func(io.Reader) error) (storage.Version, error) {
	body, v, err := s.getMedia(ctx, p)
	if err != nil {
		return "", s.errorf("read", p, err)
	}
	defer body.Close()
	if err := fn(body); err != nil {
		return "", err
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return "", s.errorf("read", p, err)
	}
	return v, nil
}

// Open implements storage.Store: one streaming download.
func (s *Store) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	body, _, err := s.getMedia(ctx, p)
	if err != nil {
		return nil, s.errorf("open", p, err)
	}
	return body, nil
}

// object is the part of an object resource the store reads.
type object struct {
	Name       string
	Size       string
	Updated    time.Time
	Generation string
}

// info returns the Info of o at the store path rel.
func (o object) info(rel string) (storage.Info, error) {
	size, err := strconv.ParseInt(o.Size, 10, 64)
	if err != nil {
		return storage.Info{}, fmt.Errorf("object %q: size %q: %w", o.Name, o.Size, err)
	}
	return storage.Info{Path: rel, Size: size, ModTime: o.Updated, Version: storage.Version(o.Generation)}, nil
}

// Stat implements storage.Store: one request for the object's metadata.
func (s *Store) Stat(ctx context.Context, p string) (storage.Info, error) {
	if err := s.begin(ctx, p); err != nil {
		return storage.Info{}, s.errorf("stat", p, err)
	}
	var o object
	if err := s.getJSON(ctx, s.objectURL(p, url.Values{"fields": {"name,size,updated,generation"}}), &o); err != nil {
		return storage.Info{}, s.errorf("stat", p, err)
	}
	info, err := o.info(p)
	if err != nil {
		return storage.Info{}, s.errorf("stat", p, err)
	}
	return info, nil
}

// Delete implements storage.Store: one request. Deleting a missing
// object is not an error.
func (s *Store) Delete(ctx context.Context, p string) error {
	if err := s.begin(ctx, p); err != nil {
		return s.errorf("delete", p, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.objectURL(p, nil), nil)
	if err != nil {
		return s.errorf("delete", p, err)
	}
	resp, err := s.send(req)
	if err != nil {
		if errors.Is(err, storage.ErrNotExist) {
			return nil
		}
		return s.errorf("delete", p, err)
	}
	resp.Body.Close()
	return nil
}

// page is one listing request's answer.
type page struct {
	Items         []object
	NextPageToken string
}

// listRequest lists up to max objects below the root whose store paths
// start with prefix, from the page token.
func (s *Store) listRequest(ctx context.Context, prefix string, max int, token string) (page, error) {
	q := url.Values{"prefix": {s.key(prefix)}, "maxResults": {strconv.Itoa(max)},
		"fields": {"items(name,size,updated,generation),nextPageToken"}}
	if token != "" {
		q.Set("pageToken", token)
	}
	var pg page
	err := s.getJSON(ctx, s.objects+"?"+q.Encode(), &pg)
	return pg, err
}

// infos appends the Infos of the listed objects that are store objects
// (below the root; no temporary object, no "folder/" placeholder).
func (s *Store) infos(dst []storage.Info, items []object) ([]storage.Info, error) {
	for _, o := range items {
		rel, ok := strings.CutPrefix(o.Name, s.keyPrefix)
		if !ok || rel == "" || strings.HasSuffix(rel, "/") || storage.IsTemp(rel) {
			continue
		}
		info, err := o.info(rel)
		if err != nil {
			return nil, err
		}
		dst = append(dst, info)
	}
	return dst, nil
}

// List implements storage.Store: listing requests of 1,000 objects each,
// collected whole and sorted (GCS lists in byte-wise order, which the
// store does not rely on), then handed to fn.
func (s *Store) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	return storage.ListResult(s.list(ctx, prefix, fn), func(err error) error {
		return s.errorf("list", strconv.Quote(prefix), err)
	})
}

func (s *Store) list(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	if _, _, err := storage.SplitPrefix(prefix); err != nil {
		return err
	}
	if s.closed.Load() {
		return os.ErrClosed
	}
	var infos []storage.Info
	for token := ""; ; {
		pg, err := s.listRequest(ctx, prefix, 1000, token)
		if err != nil {
			return err
		}
		if infos, err = s.infos(infos, pg.Items); err != nil {
			return err
		}
		if token = pg.NextPageToken; token == "" {
			break
		}
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

// ListPage implements storage.Store: one listing request for up to
// max+1 objects below the root starting with prefix. It returns at most
// max, sorted, and complete when the server had no more.
func (s *Store) ListPage(ctx context.Context, prefix string, max int) ([]storage.Info, bool, error) {
	infos, complete, err := s.listPage(ctx, prefix, max)
	if err != nil {
		return nil, false, s.errorf("list", strconv.Quote(prefix), err)
	}
	return infos, complete, nil
}

func (s *Store) listPage(ctx context.Context, prefix string, max int) ([]storage.Info, bool, error) {
	if _, _, err := storage.SplitPrefix(prefix); err != nil {
		return nil, false, err
	}
	if s.closed.Load() {
		return nil, false, os.ErrClosed
	}
	if max < 1 || max > 999 {
		return nil, false, fmt.Errorf("page size %d: want 1 to 999", max)
	}
	pg, err := s.listRequest(ctx, prefix, max+1, "")
	if err != nil {
		return nil, false, err
	}
	complete := pg.NextPageToken == "" && len(pg.Items) <= max
	if len(pg.Items) > max {
		pg.Items = pg.Items[:max]
	}
	infos, err := s.infos(nil, pg.Items)
	if err != nil {
		return nil, false, err
	}
	infos, err = storage.SortListing(infos)
	return infos, complete, err
}

// Sync implements storage.Store. An upload is durable when the server
// answers it, so it does nothing.
func (s *Store) Sync(ctx context.Context) error { return nil }

// SweepTemp implements storage.Store. Every write is one request, which
// leaves nothing behind when it fails, so there is nothing to find: it
// checks its arguments and returns no path.
func (s *Store) SweepTemp(ctx context.Context, opts storage.SweepOptions) ([]string, error) {
	if _, err := storage.CheckSweepDirs(opts.Dirs); err != nil {
		return nil, fmt.Errorf("%s: sweep: %w", s, err)
	}
	if s.closed.Load() {
		return nil, fmt.Errorf("%s: sweep: %w", s, os.ErrClosed)
	}
	return []string{}, ctx.Err()
}

// Properties implements storage.Store: every write is one request (no
// staging: GCS has no rename, and an upload is atomic already), listings
// come in bounded pages, objects keep their metadata, and the server
// enforces the conditions.
func (s *Store) Properties() storage.Properties {
	return storage.Properties{AtomicSmallWrites: true, ListPages: true, Metadata: true, ServerConditions: true}
}

// RewriteIf implements storage.Store: GCS does not rewrite (see
// Properties.Rewrite).
func (s *Store) RewriteIf(_ context.Context, p string, _ storage.Version, _ func(io.Reader, io.Writer) error) error {
	return storage.Unsupported(s, "rewrite-if", p)
}

// RemoveCreatedRoot implements storage.Store: a bucket has no root
// directory to remove.
func (s *Store) RemoveCreatedRoot(context.Context) (bool, error) {
	return false, storage.Unsupported(s, "remove-created-root", "")
}

// Stage implements storage.Store: it fails with storage.ErrNoStaging.
func (s *Store) Stage(_ context.Context, p string, _ io.Reader, _ int64, _ storage.PutOptions) (storage.Staged, error) {
	return nil, fmt.Errorf("%s: stage %s: %w", s, p, storage.ErrNoStaging)
}
