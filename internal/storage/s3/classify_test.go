package s3

import (
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestIsTransient classifies synthetic errors shaped like those of the
// adapter and minio-go (the retry package's network tests classify real
// ones).
func TestIsTransient(t *testing.T) {
	ae := storagetest.AdapterErr
	resp := func(status int, code, msg string) error {
		return fmt.Errorf("s3://bucket: get a: %w", explain(minio.ErrorResponse{StatusCode: status, Code: code, Message: msg}))
	}
	own := []struct {
		name string
		err  error
		want bool
	}{
		{"minio EOF", ae(&url.Error{Op: "Put", URL: "https://h/b/k", Err: errors.New("Connection closed by foreign host https://h/b/k. Retry again.")}), true},
		{"minio 503", ae(minio.ErrorResponse{StatusCode: 503, Code: "SlowDown"}), true},
		{"minio 500", ae(minio.ErrorResponse{StatusCode: 500, Code: "InternalError"}), true},
		{"minio 502", ae(minio.ErrorResponse{StatusCode: 502}), true},
		{"minio 504", ae(minio.ErrorResponse{StatusCode: 504}), true},
		{"minio 429", ae(minio.ErrorResponse{StatusCode: 429}), true},
		{"minio 400 RequestTimeout", ae(minio.ErrorResponse{StatusCode: 400, Code: "RequestTimeout"}), true},
		{"minio 400", ae(minio.ErrorResponse{StatusCode: 400, Code: "InvalidArgument"}), false},
		{"minio 501", ae(minio.ErrorResponse{StatusCode: 501, Code: "NotImplemented"}), false},
		{"minio 403", ae(minio.ErrorResponse{StatusCode: 403, Code: "AccessDenied"}), false},
		{"minio 400 ExpiredToken", ae(minio.ErrorResponse{StatusCode: 400, Code: "ExpiredToken"}), false},
		{"minio 409", ae(minio.ErrorResponse{StatusCode: 409, Code: "ConditionalRequestConflict"}), false},
		{"minio pointer 503", ae(&minio.ErrorResponse{StatusCode: 503, Code: "SlowDown"}), true},
		// The adapter's own *s3Error (explain), as its methods return it.
		{"s3 error 503", resp(503, "SlowDown", "Please reduce your request rate."), true},
		{"s3 error HEAD 503", resp(503, "503 Service Unavailable", "503 Service Unavailable"), true},
		{"s3 error 400 RequestTimeout", resp(400, "RequestTimeout", "Your socket connection to the server was not read from or written to within the timeout period."), true},
		{"s3 error 400", resp(400, "400 Bad Request", "400 Bad Request"), false},
		{"s3 error 501", resp(501, "NotImplemented", "A header you provided implies functionality that is not implemented"), false},
		{"s3 error 403", resp(403, "AccessDenied", "Access Denied."), false},
		{"s3 error 404", resp(404, "NoSuchKey", "The specified key does not exist."), false},
	}
	cases := storagetest.NetworkCases()
	for _, c := range own {
		cases = append(cases, storagetest.TransientCase{Name: c.name, Err: c.err, Want: c.want})
	}
	storagetest.Classify(t, new(Store).IsTransient, cases)
}
