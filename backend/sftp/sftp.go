// Package sftp enables distributor's sftp backend, for destinations on SFTP
// servers (OpenSSH and others; golang.org/x/crypto/ssh and github.com/pkg/sftp),
// in a program that imports it for its side effect, as package all does;
// without it, none of its code is linked and "backend: sftp" is unknown.
// See docs/backends.md.
package sftp

import (
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
)

func init() { registry.Register(sftp.Backend()) }
