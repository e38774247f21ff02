package sftp

import (
	"errors"

	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/distributor-dev/distributor/internal/storage"
)

// IsTransient implements storage.Store. Never transient: storage.IsPermanent, a
// host key known_hosts does not vouch for, a refused SSH authentication.
// Transient: SFTP "no connection" or "connection lost" (any other status, even
// "failure", is final) and storage.IsTransient's (a handshake cut by EOF).
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
