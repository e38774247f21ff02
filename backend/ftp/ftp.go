// Package ftp enables distributor's ftp backend, for destinations on FTP
// servers, plain or over TLS (FTPS: vsftpd, Pure-FTPd, ProFTPD and others;
// github.com/jlaffaye/ftp). Import it for its side effect:
//
//	import _ "github.com/distributor-dev/distributor/backend/ftp"
//
// Without it, none of its code is linked and "backend: ftp" is an unknown
// backend. docs/backends.md describes its configuration block.
package ftp

import (
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

func init() { registry.Register(ftp.Backend()) }
