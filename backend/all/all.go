// Package all enables every storage backend distributor has: import it for
// its side effect, as the command line does.
//
//	import _ "github.com/distributor-dev/distributor/backend/all"
//
// Local disk is always there; this adds SFTP, S3, GCS, Azure Blob Storage and FTP/FTPS.
// A program using only one imports that backend's package, and links less.
package all

import (
	_ "github.com/distributor-dev/distributor/backend/azure"
	_ "github.com/distributor-dev/distributor/backend/ftp"
	_ "github.com/distributor-dev/distributor/backend/gcs"
	_ "github.com/distributor-dev/distributor/backend/s3"
	_ "github.com/distributor-dev/distributor/backend/sftp"
)
