package sftp

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	sftplib "github.com/pkg/sftp"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Backend describes the sftp backend to the configuration and the
// commands (see storage.Backend): a destination's sftp block decodes into
// an *Options without Root and AgentSocket, which Open fills in.
func Backend() storage.Backend {
	return storage.Backend{
		Name:       "sftp",
		Title:      "SFTP",
		Summary:    "an SFTP server",
		Fields:     storage.BlockFields(Block{}),
		Needs:      "host, user and known_hosts_file",
		Path:       storage.PathServer,
		Jobs:       8,
		Remote:     true,
		Properties: properties,
		Schema:     schema,
		Decode:     decode,
		Open:       openStore,
		Location:   location,
	}
}

// Block is the sftp block (see storage.DecodeBlock; schema.json describes
// its members); decode makes it an *Options.
type Block struct {
	Host              string        `block:"host,required" min:"1" pattern:"^[^\\s/@]+$"`
	Port              int           `block:"port" default:"22" min:"1" max:"65535" invalid:"a TCP port"`
	User              string        `block:"user,required" min:"1" pattern:"^\\S+$"`
	IdentityFile      string        `block:"identity_file,file"`
	KnownHostsFile    string        `block:"known_hosts_file,required,file" why:"host keys are always verified"`
	DialTimeout       time.Duration `block:"dial_timeout"`
	KeepaliveInterval time.Duration `block:"keepalive_interval"`
	KeepaliveTimeout  time.Duration `block:"keepalive_timeout"`
}

// decode reads an sftp block; timeouts not set stay 0, New's defaults.
func decode(b storage.Block) any {
	k := &Block{}
	storage.DecodeBlock(b, k, func(b storage.Block, name string) bool {
		return storage.CheckServer(b, name, "sftp", &k.Host, k.User)
	})
	return &Options{Host: k.Host, Port: k.Port, User: k.User, IdentityFile: k.IdentityFile, KnownHostsFile: k.KnownHostsFile,
		DialTimeout: k.DialTimeout, KeepaliveInterval: k.KeepaliveInterval, KeepaliveTimeout: k.KeepaliveTimeout}
}

// openStore connects to the settings' server at root, with the agent at SSH_AUTH_SOCK.
func openStore(ctx context.Context, settings any, root string, env func(string) string) (storage.Store, error) {
	c, ok := settings.(*Options)
	if !ok {
		return nil, fmt.Errorf("sftp: no sftp block (settings %T)", settings)
	}
	o := *c
	o.Root, o.AgentSocket = root, env("SSH_AUTH_SOCK")
	return New(ctx, o)
}

// location is the server and account a root is on.
func location(settings any) string {
	c, _ := settings.(*Options)
	if c == nil {
		return "sftp://"
	}
	return fmt.Sprintf("sftp://%s@%s:%d", c.User, c.Host, c.Port)
}

// properties: SFTP stages (a rename or a hard link makes a staged file visible).
var properties = storage.Properties{Stage: true, Directories: true, Remote: true}

// Properties implements storage.Store.
func (s *Store) Properties() storage.Properties { return properties }

//go:embed schema.json
var schema string // the block's JSON Schema (storage.Backend.Schema)

// IsTransient implements storage.Store. Never transient: storage.IsPermanent, a
// host key known_hosts does not vouch for, a refused SSH authentication.
// Transient: SFTP "no connection" or "connection lost" (any other status, even
// "failure", is final) and storage.IsTransient's (a handshake cut by EOF).
func (s *Store) IsTransient(err error) bool {
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
