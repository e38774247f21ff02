// S3 error responses, and what each means to a caller.

package s3

import (
	"net/http"
	"strconv"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/minio/minio-go/v7"
)

// s3Error is an S3 error response with the storage error it stands for.
type s3Error struct {
	resp minio.ErrorResponse
	is   error // storage.ErrNotExist, storage.ErrPrecondition or nil
	hint string
}

func (e *s3Error) Error() string {
	msg := e.resp.Code
	if e.resp.Message != "" {
		msg += ": " + e.resp.Message
	}
	if e.resp.StatusCode != 0 {
		msg += " (HTTP " + strconv.Itoa(e.resp.StatusCode) + ")"
	}
	if e.hint != "" {
		msg += "; " + e.hint
	}
	return msg
}

func (e *s3Error) Is(target error) bool { return e.is != nil && target == e.is }

// explain turns a minio-go error into an *s3Error (keeping transport and
// other errors as they are). NoSuchKey matches storage.ErrNotExist.
func explain(err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "" && resp.StatusCode == 0 {
		return err
	}
	e := &s3Error{resp: resp}
	switch {
	case resp.Code == "NoSuchKey":
		e.is = storage.ErrNotExist
	case resp.Code == "NoSuchBucket":
		e.hint = "the bucket does not exist"
	case resp.StatusCode == http.StatusForbidden || credentialCodes[resp.Code]:
		e.hint = "check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, the shared credentials file or the instance role) and their permissions (see docs/backends.md)"
	}
	return e
}

// credentialCodes are the error codes of rejected credentials (the last
// is versitygw's for an unknown access key).
var credentialCodes = map[string]bool{
	"AccessDenied": true, "InvalidAccessKeyId": true, "SignatureDoesNotMatch": true,
	"InvalidToken": true, "ExpiredToken": true, "TokenRefreshRequired": true, "XAdminUserNotFound": true,
}
