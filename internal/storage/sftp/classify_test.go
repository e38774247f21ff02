package sftp

import (
	"errors"
	"fmt"
	"io"
	"testing"

	sftplib "github.com/pkg/sftp"

	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// TestIsTransient classifies synthetic errors shaped like those of the
// adapter and pkg/sftp (the retry package's network tests classify real
// ones).
func TestIsTransient(t *testing.T) {
	ae := storagetest.AdapterErr
	own := []struct {
		name string
		err  error
		want bool
	}{
		{"sftp connection lost", ae(sftplib.ErrSSHFxConnectionLost), true},
		{"sftp no connection", ae(sftplib.ErrSSHFxNoConnection), true},
		{"sftp status lost", ae(&sftplib.StatusError{Code: uint32(sftplib.ErrSSHFxConnectionLost)}), true},
		{"sftp status failure", ae(&sftplib.StatusError{Code: uint32(sftplib.ErrSSHFxFailure)}), false},
		{"sftp status unsupported", ae(&sftplib.StatusError{Code: uint32(sftplib.ErrSSHFxOpUnsupported)}), false},
		{"sftp status permission", ae(&sftplib.StatusError{Code: uint32(sftplib.ErrSSHFxPermissionDenied)}), false},
		{"host key", ae(fmt.Errorf("connect: %w", &HostKeyError{Host: "h", KeyType: "ssh-ed25519"})), false},
		{"ssh auth", ae(errors.New("connect: ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain")), false},
		// Permanent wins over transient in an error that wraps both.
		{"host key and EOF", fmt.Errorf("%w (%w)", &HostKeyError{}, io.EOF), false},
	}
	cases := storagetest.NetworkCases()
	for _, c := range own {
		cases = append(cases, storagetest.TransientCase{Name: c.name, Err: c.err, Want: c.want})
	}
	storagetest.Classify(t, (*Store)(nil).IsTransient, cases)
}
