// Package sftp enables distributor's sftp backend, for destinations on
// SFTP servers (OpenSSH and others; golang.org/x/crypto/ssh and github.com/pkg/sftp). Import it for its side effect:
//
//	import _ "github.com/distributor-dev/distributor/backend/sftp"
//
// A program that does not import it links none of its code, and a
// destination with "backend: sftp" is then refused as an unknown backend.
// The configuration block it reads is described in docs/backends.md.
package sftp

import (
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
)

func init() { registry.Register(sftp.Backend()) }
