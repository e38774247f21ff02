package sftp

import (
	"errors"

	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/distributor-dev/distributor/internal/storage"
)

// IsTransient implements storage.Store. Never transient, besides
// storage.IsPermanent: a host key that known_hosts does not vouch for
// (*HostKeyError, knownhosts errors) and a refused SSH authentication.
// Transient: an SFTP status of "no connection" or "connection lost" (every
// other SFTP status, such as the generic "failure", is final), and the
// network failures of storage.IsTransient (an SSH handshake cut by EOF
// among them).
func (s *Store) IsTransient(err error) bool { return isTransient(err) }

func isTransient(err error) bool {
	if err == nil || storage.IsPermanent(err) || sshRefused(err) {
		return false
	}
	var se *sftplib.StatusError
	if errors.As(err, &se) {
		c := se.FxCode()
		return c == sftplib.ErrSSHFxNoConnection || c == sftplib.ErrSSHFxConnectionLost
	}
	if errors.Is(err, sftplib.ErrSSHFxConnectionLost) || errors.Is(err, sftplib.ErrSSHFxNoConnection) {
		return true
	}
	return storage.IsTransient(err)
}

// sshRefused reports whether err is the server's or known_hosts' refusal
// of this connection, which no repetition changes.
func sshRefused(err error) bool {
	var (
		hostKey *HostKeyError
		keyErr  *knownhosts.KeyError
		revoked *knownhosts.RevokedError
		auth    *authError
	)
	return errors.As(err, &hostKey) || errors.As(err, &keyErr) || errors.As(err, &revoked) || errors.As(err, &auth)
}
