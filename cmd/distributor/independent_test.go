package main

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/distributor-dev/distributor/internal/storage/azure/azuretest"
	"github.com/distributor-dev/distributor/internal/storage/gcs/gcstest"
	"github.com/distributor-dev/distributor/internal/storage/s3/s3test"
)

// The independent listers read a root (a prefix of a bucket or
// container) with a client that shares no code with distributor, and
// return each object's name below the root with its content.

// s3Lister lists with minio-go.
func s3Lister(srv *s3test.Server, prefix string) func(t *testing.T) map[string]string {
	return func(t *testing.T) map[string]string {
		t.Helper()
		mc, err := minio.New(strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://"), &minio.Options{
			Creds:  credentials.NewStaticV4(srv.Env["AWS_ACCESS_KEY_ID"], srv.Env["AWS_SECRET_ACCESS_KEY"], ""),
			Secure: strings.HasPrefix(srv.URL, "https://"), Region: srv.Region, BucketLookup: minio.BucketLookupPath,
			Transport: srv.Transport,
		})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for o := range mc.ListObjects(t.Context(), srv.Bucket, minio.ListObjectsOptions{Prefix: prefix + "/", Recursive: true}) {
			if o.Err != nil {
				t.Fatalf("list %s: %v", prefix, o.Err)
			}
			r, err := mc.GetObject(t.Context(), srv.Bucket, o.Key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatalf("get %s: %v", o.Key, err)
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatalf("get %s: %v", o.Key, err)
			}
			got[strings.TrimPrefix(o.Key, prefix+"/")] = string(data)
		}
		return got
	}
}

// gcsLister lists with plain net/http against the JSON API.
func gcsLister(srv *gcstest.Server, prefix string) func(t *testing.T) map[string]string {
	get := func(t *testing.T, u string) []byte {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s, %v", u, resp.Status, err)
		}
		return data
	}
	return func(t *testing.T) map[string]string {
		t.Helper()
		got := map[string]string{}
		base := srv.Endpoint + "b/" + url.PathEscape(srv.Bucket) + "/o"
		for token := ""; ; {
			var page struct {
				Items         []struct{ Name string }
				NextPageToken string
			}
			q := url.Values{"prefix": {prefix + "/"}, "pageToken": {token}}
			if err := json.Unmarshal(get(t, base+"?"+q.Encode()), &page); err != nil {
				t.Fatal(err)
			}
			for _, o := range page.Items {
				got[strings.TrimPrefix(o.Name, prefix+"/")] = string(get(t, base+"/"+url.PathEscape(o.Name)+"?alt=media"))
			}
			if token = page.NextPageToken; token == "" {
				return got
			}
		}
	}
}

// azureLister lists with the SDK's container client.
func azureLister(srv *azuretest.Server, prefix string) func(t *testing.T) map[string]string {
	return func(t *testing.T) map[string]string {
		t.Helper()
		c := srv.Client(t, srv.Container)
		got := map[string]string{}
		p := prefix + "/"
		for pager := c.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &p}); pager.More(); {
			page, err := pager.NextPage(t.Context())
			if err != nil {
				t.Fatalf("list %s: %v", prefix, err)
			}
			for _, b := range page.Segment.BlobItems {
				resp, err := c.NewBlobClient(*b.Name).DownloadStream(t.Context(), nil)
				if err != nil {
					t.Fatalf("get %s: %v", *b.Name, err)
				}
				data, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatalf("get %s: %v", *b.Name, err)
				}
				got[strings.TrimPrefix(*b.Name, p)] = string(data)
			}
		}
		return got
	}
}

// objects lists the root through the test's store and, for a backend
// with an independent lister, checks that the lister sees the same names
// and bytes.
func (be backend) objects(t *testing.T) map[string]string {
	t.Helper()
	got := objects(t, be.store)
	if be.list != nil {
		if ind := be.list(t); !maps.Equal(got, ind) {
			t.Errorf("an independent client lists %q\nthe store lists          %q", ind, got)
		}
	}
	return got
}
