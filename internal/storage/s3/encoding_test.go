package s3

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestContentEncoding: every object carries exactly the Content-Encoding of
// its Metadata, none when plain (no "aws-chunked" of a streaming upload
// over http), as a presigned GET of a client of the test's own reads it,
// and Get returns the bytes as stored (spec 3.4).
func TestContentEncoding(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		s := open(t, opts)
		storagetest.ContentEncoding(t, s, served(t, opts, s))
	})
}

// served reads objects of s with presigned GETs of a minio-go client of
// the test's own.
func served(t *testing.T, opts Options, s *Store) storagetest.Served {
	host, secure, err := parseEndpoint(opts.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(host, &minio.Options{Secure: secure, Region: opts.Region, BucketLookup: minio.BucketLookupPath,
		Creds: credentials.NewStaticV4(opts.Getenv("AWS_ACCESS_KEY_ID"), opts.Getenv("AWS_SECRET_ACCESS_KEY"), "")})
	if err != nil {
		t.Fatal(err)
	}
	return func(t *testing.T, p string) (string, []byte) {
		u, err := c.PresignedGetObject(t.Context(), opts.Bucket, s.Key(p), time.Hour, nil)
		if err != nil {
			t.Fatal(err)
		}
		return storagetest.ServedGET(t, u.String())
	}
}

// TestDigestSigned: the upload signs PutOptions.SHA256, so a server that
// checks the payload (versitygw, SeaweedFS; not gofakes3) refuses bytes
// whose digest differs, and stores nothing.
func TestDigestSigned(t *testing.T) {
	for name, opts := range map[string]func(*testing.T) Options{"versitygw": versityOptions, "seaweedfs": weedOptions} {
		t.Run(name, func(t *testing.T) {
			s := open(t, uniquePrefix(t, opts(t)))
			_, err := s.Put(t.Context(), "x", strings.NewReader("hello"), 5, storage.PutOptions{SHA256: "sha256:" + strings.Repeat("ab", 32)})
			if err == nil || !strings.Contains(err.Error(), "XAmzContentSHA256Mismatch") {
				t.Errorf("Put with another digest: %v, want XAmzContentSHA256Mismatch", err)
			}
			if _, err := s.Stat(t.Context(), "x"); !errors.Is(err, storage.ErrNotExist) {
				t.Errorf("Stat after the refused Put: %v, want ErrNotExist", err)
			}
		})
	}
}
