package gcs

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/objstore"
)

// noGeneration is the ifGenerationMatch of a Version that is not a
// generation (the up-front proof's mismatch is one): a generation no
// object reaches (GCS counts microseconds since 1970), so that the server,
// not this process, refuses the write, and the proof tests the server.
const noGeneration = math.MaxInt64

// api is the store's objstore.Client.
type api struct{ s *Store }

// Put sends one upload with the package documentation's ifGenerationMatch.
func (a api) Put(ctx context.Context, key string, w objstore.Write) (storage.Version, error) {
	gen := ""
	switch {
	case w.Mode == storage.PutCreate, w.Mode == storage.PutIfVersion && w.IfVersion == "":
		gen = "0"
	case w.Mode == storage.PutIfVersion:
		gen = strconv.FormatInt(noGeneration, 10)
		if n, err := strconv.ParseInt(string(w.IfVersion), 10, 64); err == nil && n > 0 {
			gen = string(w.IfVersion)
		}
	}
	v, err := a.s.upload(ctx, key, w, gen)
	if err != nil && w.Mode == storage.PutIfVersion && errors.Is(err, storage.ErrPrecondition) {
		if w.IfVersion == "" {
			return "", fmt.Errorf("%w: object exists", storage.ErrPrecondition)
		}
		return "", fmt.Errorf("%w: the object is absent or its generation is not %s", storage.ErrPrecondition, w.IfVersion)
	}
	return v, err
}

// upload sends w to key in one multipart upload, ifGenerationMatch=gen unless "".
func (s *Store) upload(ctx context.Context, key string, w objstore.Write, gen string) (storage.Version, error) {
	md := w.Metadata
	if strings.ContainsAny(md.ContentType, "\r\n") {
		return "", fmt.Errorf("content type %q: a line break", md.ContentType)
	}
	meta, err := json.Marshal(struct {
		Name               string `json:"name"`
		ContentType        string `json:"contentType"`
		CacheControl       string `json:"cacheControl,omitempty"`
		ContentDisposition string `json:"contentDisposition,omitempty"`
		ContentEncoding    string `json:"contentEncoding,omitempty"`
	}{key, md.ContentType, md.CacheControl, md.ContentDisposition, md.ContentEncoding})
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
	body := io.NopCloser(io.MultiReader(strings.NewReader(head), w.Body, strings.NewReader(tail)))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.uploads+"?"+q.Encode(), body)
	if err != nil {
		return "", err
	}
	req.ContentLength = int64(len(head)) + w.Size + int64(len(tail))
	req.Header.Set("Content-Type", "multipart/related; boundary="+boundary)
	resp, err := s.send(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var obj struct{ Generation string }
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil {
		return "", fmt.Errorf("the server's answer: %w", err)
	}
	return storage.Version(obj.Generation), nil
}

// Open sends one download of key that accepts gzip: GCS serves an object
// stored with "Content-Encoding: gzip" as stored only then (else it
// decompresses it), and the transport decodes nothing it did not ask for.
func (a api) Open(ctx context.Context, key string) (io.ReadCloser, storage.Version, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.s.objectURL(key, url.Values{"alt": {"media"}}), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := a.s.send(req)
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

// object is the part of an object resource the store reads.
type object struct {
	Name       string
	Size       string
	Updated    time.Time
	Generation string
}

func (o object) object() (objstore.Object, error) {
	size, err := strconv.ParseInt(o.Size, 10, 64)
	if err != nil {
		return objstore.Object{}, fmt.Errorf("object %q: size %q: %w", o.Name, o.Size, err)
	}
	return objstore.Object{Key: o.Name, Size: size, ModTime: o.Updated, Version: storage.Version(o.Generation)}, nil
}

func (a api) Head(ctx context.Context, key string) (objstore.Object, error) {
	var o object
	if err := a.s.getJSON(ctx, a.s.objectURL(key, url.Values{"fields": {"name,size,updated,generation"}}), &o); err != nil {
		return objstore.Object{}, err
	}
	return o.object()
}

func (a api) Delete(ctx context.Context, key string) error {
	resp, err := a.s.request(ctx, http.MethodDelete, a.s.objectURL(key, nil))
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// List sends listing requests of 1,000 objects each (GCS lists in
// byte-wise order, which the store does not rely on), or one of max.
func (a api) List(ctx context.Context, prefix string, max int, fn func(objstore.Object)) (bool, error) {
	q := url.Values{"prefix": {prefix}, "maxResults": {strconv.Itoa(cmp.Or(max, 1000))},
		"fields": {"items(name,size,updated,generation),nextPageToken"}}
	for {
		var pg struct {
			Items         []object
			NextPageToken string
		}
		if err := a.s.getJSON(ctx, a.s.objects+"?"+q.Encode(), &pg); err != nil {
			return false, err
		}
		for _, it := range pg.Items {
			o, err := it.object()
			if err != nil {
				return false, err
			}
			fn(o)
		}
		if pg.NextPageToken == "" || max > 0 {
			return pg.NextPageToken != "", nil
		}
		q.Set("pageToken", pg.NextPageToken)
	}
}

// Uploads finds nothing: every write is one request, which leaves nothing
// behind when it fails.
func (a api) Uploads(context.Context, string) ([]objstore.Upload, error) { return nil, nil }

func (a api) Abort(context.Context, objstore.Upload) error { return nil }
