package ftptest

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"testing"

	"github.com/distributor-dev/distributor/internal/testutil/faultproxy"
)

// pasvPorts is how many passive data ports each test server has
// (scripts/servers/ftp.sh).
const pasvPorts = 1000

// Proxy puts faultproxy's faults between a client and an FTP test server
// on every connection, control and data: one proxy in front of the
// control port and one in front of each passive data port, at the same
// port number on another loopback address (127.0.0.x, x from 2). A client
// of Login connects there, and its data connections follow: the adapter,
// as jlaffaye/ftp, takes a data connection at the control connection's
// host and the port EPSV (or PASV) names.
type Proxy struct {
	Control *faultproxy.Proxy
	Data    []*faultproxy.Proxy
	login   Login
}

// Proxy starts a Proxy in front of l's server; it stops when the test ends.
func (l Login) Proxy(t testing.TB) *Proxy {
	t.Helper()
	if l.Pasv == 0 {
		t.Fatalf("FTP test server %s: its passive ports are not known (DISTRIBUTOR_TEST_FTP_*_PASV; restart scripts/test-servers)", l.Server)
	}
	for range 20 {
		n, _ := rand.Int(rand.Reader, big.NewInt(250))
		host := fmt.Sprintf("127.0.0.%d", 2+n.Int64())
		if p, ok := l.proxyAt(t, host); ok {
			return p
		}
	}
	t.Fatalf("FTP test server %s: no loopback address had its %d passive ports free", l.Server, pasvPorts)
	return nil
}

// proxyAt starts the proxies on host, or reports that a port was taken
// (the proxies started so far stop with the test).
func (l Login) proxyAt(t testing.TB, host string) (*Proxy, bool) {
	target := func(port int) string { return net.JoinHostPort(l.Host, strconv.Itoa(port)) }
	control, err := faultproxy.NewAt(t, net.JoinHostPort(host, "0"), target(l.Port))
	if err != nil {
		return nil, false
	}
	p := &Proxy{Control: control, login: l}
	for port := l.Pasv; port < l.Pasv+pasvPorts; port++ {
		d, err := faultproxy.NewAt(t, net.JoinHostPort(host, strconv.Itoa(port)), target(port))
		if err != nil {
			return nil, false
		}
		p.Data = append(p.Data, d)
	}
	p.login.Host, p.login.Port = host, control.Port()
	p.login.ServerName = "localhost" // the certificate names 127.0.0.1 and localhost
	return p, true
}

// Login is the server's login as reached through the proxy.
func (p *Proxy) Login() Login { return p.login }

func (p *Proxy) each(f func(*faultproxy.Proxy)) {
	f(p.Control)
	for _, d := range p.Data {
		f(d)
	}
}

// Stall stalls every connection, control and data (see faultproxy.Stall).
func (p *Proxy) Stall() { p.each((*faultproxy.Proxy).Stall) }

// Heal ends a Stall (see faultproxy.Heal).
func (p *Proxy) Heal() { p.each((*faultproxy.Proxy).Heal) }

// Cut drops every connection open now (see faultproxy.Cut).
func (p *Proxy) Cut() { p.each((*faultproxy.Proxy).Cut) }

// Forwarded is the client-to-server bytes forwarded over every connection.
func (p *Proxy) Forwarded() int64 {
	var n int64
	p.each(func(f *faultproxy.Proxy) { n += f.Forwarded() })
	return n
}
