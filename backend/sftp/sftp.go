// Package sftp enables distributor's sftp backend, for destinations on
// SFTP servers (OpenSSH and others; golang.org/x/crypto/ssh and github.com/pkg/sftp). Import it for its side effect:
//
//	import _ "github.com/distributor-dev/distributor/backend/sftp"
//
// Without it, none of its code is linked and "backend: sftp" is an unknown
// backend. docs/backends.md describes its configuration block.
package sftp

import (
	"github.com/distributor-dev/distributor/internal/storage/registry"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
)

func init() { registry.Register(sftp.Backend()) }
