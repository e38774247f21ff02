package sftp

import (
	"context"
	_ "embed"
	"fmt"
	"net"
	"strings"
	"unicode"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Backend describes the sftp backend to the configuration and the
// commands (see storage.Backend): a destination's sftp block decodes into
// an *Options without Root and AgentSocket, which Open fills in.
func Backend() storage.Backend {
	return storage.Backend{
		Name:    "sftp",
		Title:   "SFTP",
		Summary: "an SFTP server",
		Fields: []string{"host", "port", "user", "identity_file", "known_hosts_file",
			"dial_timeout", "keepalive_interval", "keepalive_timeout"},
		Needs:      "host, user and known_hosts_file",
		Path:       storage.PathServer,
		Jobs:       8,
		Remote:     true,
		Properties: properties,
		Schema:     schema,
		Decode:     decodeBlock,
		Open:       openStore,
		Location:   location,
	}
}

// decodeBlock reads an sftp block. The port defaults to 22; the timeouts stay
// 0 (New's defaults) unless set.
func decodeBlock(b storage.Block) any {
	o := &Options{Port: 22}
	if h, ok := b.String("host", true); ok {
		o.Host = checkHost(b, h)
	}
	if p, ok := b.Int("port"); ok {
		if p < 1 || p > 65535 {
			b.Errorf("port", "%d is not a TCP port (1 to 65535)", p)
		} else {
			o.Port = int(p)
		}
	}
	if u, ok := b.String("user", true); ok {
		if u == "" || strings.IndexFunc(u, spaceOrControl) >= 0 {
			b.Errorf("user", "%q is not a user name", u)
		} else {
			o.User = u
		}
	}
	if p, ok := b.String("identity_file", false); ok && p != "" {
		o.IdentityFile = b.LocalPath("identity_file", p)
	}
	if !b.Has("known_hosts_file") {
		b.Require("known_hosts_file", "host keys are always verified")
	} else if p, ok := b.String("known_hosts_file", false); ok {
		o.KnownHostsFile = b.LocalPath("known_hosts_file", p)
	}
	o.DialTimeout = b.Duration("dial_timeout")
	o.KeepaliveInterval = b.Duration("keepalive_interval")
	o.KeepaliveTimeout = b.Duration("keepalive_timeout")
	return o
}

// checkHost returns h without the brackets of an IPv6 address, or ""
// when it is not a host name or IP address (reported).
func checkHost(b storage.Block, h string) string {
	host := h
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	switch {
	case host == "":
		b.Errorf("host", "must not be empty")
	case strings.IndexFunc(host, spaceOrControl) >= 0:
		b.Errorf("host", "%q must not contain spaces or control characters", h)
	case strings.Contains(host, "/"):
		b.Errorf("host", "%q must be a host name or IP address, not a URL or path", h)
	case strings.Contains(host, "@"):
		b.Errorf("host", "%q must be a host name or IP address; put the user name in sftp.user", h)
	case strings.Contains(host, ":") && net.ParseIP(host) == nil:
		b.Errorf("host", "%q must be a host name or IP address; put the port in sftp.port", h)
	default:
		return host
	}
	return ""
}

func spaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// openStore connects to the server of the settings' block at root; the agent
// socket comes from SSH_AUTH_SOCK.
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

// schema is the JSON Schema of the sftp block (storage.Backend.Schema).
//
//go:embed schema.json
var schema string
