// Package ftp enables distributor's ftp backend, for destinations on FTP
// servers, plain or over TLS (FTPS: vsftpd, Pure-FTPd, ProFTPD and others;
// github.com/jlaffaye/ftp), in a program that imports it for its side
// effect, as package all does; without it, none of its code is linked and
// "backend: ftp" is unknown. See docs/backends.md.
package ftp

import (
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/registry"
)

func init() { registry.Register(ftp.Backend()) }
