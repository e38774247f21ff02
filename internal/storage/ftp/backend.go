package ftp

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Backend describes the ftp backend to the configuration and the commands
// (see storage.Backend): a destination's ftp block decodes into an
// *Options without Root, which Open fills in with the password.
func Backend() storage.Backend {
	return storage.Backend{
		Name:       "ftp",
		Title:      "FTP",
		Summary:    "an FTP or FTPS server",
		Fields:     storage.BlockFields(Block{}),
		Needs:      "host and user",
		Path:       storage.PathServer,
		Jobs:       4,
		Remote:     true,
		Properties: properties,
		Schema:     schema,
		Decode:     decode,
		Open:       openStore,
		Location:   location,
		Warnings:   warnings,
	}
}

// warnings says, on every run, that tls: none sends everything in the clear.
func warnings(settings any) []string {
	if o, ok := settings.(*Options); ok && o.TLS == TLSNone {
		return []string{"tls: none: the password and every file cross the network in the clear (insecure_plaintext: true)"}
	}
	return nil
}

// Block is the ftp block (see storage.DecodeBlock; schema.json describes
// its members); decode makes it an *Options.
type Block struct {
	// Host name or IP address (no user, port or path).
	Host string `block:"host,required" min:"1" pattern:"^[^\\s/@]+$"`
	// TCP port. Default 21, or 990 with tls: implicit.
	Port int `block:"port" default:"21" min:"1" max:"65535" invalid:"a TCP port"`
	// The user name to log in as.
	User string `block:"user,required" min:"1" pattern:"^\\S+$"`
	// The password; without it the environment variable DISTRIBUTOR_FTP_PASSWORD. Never printed.
	Password Secret `block:"password"`
	// explicit (AUTH TLS on the control and every data connection, the default), implicit (TLS from the first byte, as on port 990) or none (plain FTP: refused unless insecure_plaintext is true).
	TLS string `block:"tls" pattern:"^(explicit|implicit|none)$" invalid:"tls mode (explicit, implicit or none)"`
	// Allow tls: none, which sends the password and every file in the clear.
	InsecurePlaintext bool `block:"insecure_plaintext"`
	// A PEM file of CA or self-signed certificates to trust besides the system's. Relative paths resolve against the configuration file's directory; ~/ expands to the home directory.
	CAFile string `block:"ca_file,file"`
	// The name the server's certificate must carry. Default: host.
	ServerName string `block:"server_name" pattern:"^[^\\s/@]+$" invalid:"host name"`
	// Parallel control connections, each with its own data connections.
	Connections int `block:"connections" default:"4" min:"1" max:"16" invalid:"number of connections"`
	// How long connecting, the TLS handshake and the login may take. Units d, h, m, s (e.g. 30s). Default 30s.
	DialTimeout time.Duration `block:"dial_timeout"`
	// A command or transfer fails when no byte has moved on its connection for this long, however long it runs while data flows. Default 30s.
	IdleTimeout time.Duration `block:"idle_timeout"`
}

// Secret is a password: fmt prints it as "(hidden)".
type Secret string

// String hides the secret.
func (Secret) String() string { return "(hidden)" }

// GoString hides the secret from %#v.
func (Secret) GoString() string { return "(hidden)" }

// TLS modes (Options.TLS).
const (
	TLSExplicit = "explicit"
	TLSImplicit = "implicit"
	TLSNone     = "none"
)

// decode reads an ftp block; timeouts not set stay 0, New's defaults.
func decode(b storage.Block) any {
	k := &Block{}
	storage.DecodeBlock(b, k, func(b storage.Block, name string) bool {
		return storage.CheckServer(b, name, "ftp", &k.Host, k.User)
	})
	if k.TLS == "" {
		k.TLS = TLSExplicit
	}
	if k.TLS == TLSImplicit && !b.Has("port") {
		k.Port = 990
	}
	if k.TLS == TLSNone && !k.InsecurePlaintext {
		b.Errorf("tls", "none sends the password and every file in the clear: set insecure_plaintext: true to allow it")
	}
	return &Options{Host: k.Host, Port: k.Port, User: k.User, Password: k.Password, TLS: k.TLS, CAFile: k.CAFile,
		ServerName: k.ServerName, Connections: k.Connections, DialTimeout: k.DialTimeout, IdleTimeout: k.IdleTimeout}
}

// openStore connects to the settings' server at root, with the password
// of the block or else of DISTRIBUTOR_FTP_PASSWORD.
func openStore(ctx context.Context, settings any, root string, env func(string) string) (storage.Store, error) {
	c, ok := settings.(*Options)
	if !ok {
		return nil, fmt.Errorf("ftp: no ftp block (settings %T)", settings)
	}
	o := *c
	o.Root = root
	if o.Password == "" {
		o.Password = Secret(env("DISTRIBUTOR_FTP_PASSWORD"))
	}
	return New(ctx, o)
}

// location is the server a root is on: two destinations on one server
// with nested paths overlap, whatever account they log in as.
func location(settings any) string {
	c, _ := settings.(*Options)
	if c == nil {
		return "ftp://"
	}
	return fmt.Sprintf("ftp://%s", net.JoinHostPort(c.Host, fmt.Sprint(c.Port)))
}

//go:embed schema.json
var schema string // the block's JSON Schema (storage.Backend.Schema)
