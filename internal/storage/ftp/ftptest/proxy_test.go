package ftptest

import (
	"path"
	"strings"
	"testing"
)

// TestProxy: through a Proxy, a client reaches every connection through
// the proxies (the data connections too: their bytes are counted), and a
// cut drops the control connection.
func TestProxy(t *testing.T) {
	for _, server := range Servers {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			l := Real(t, server).FreshRoot(t)
			p := l.Proxy(t)
			c := p.Login().Connect(t)
			if err := c.MakeDir(l.Path); err != nil {
				t.Fatalf("MKD %s: %v", l.Path, err)
			}
			body := strings.Repeat("x", 1<<20)
			before := p.Control.Forwarded()
			if err := c.Stor(path.Join(l.Path, "f.txt"), strings.NewReader(body)); err != nil {
				t.Fatalf("STOR through the proxy: %v", err)
			}
			if got := p.Login().ListFiles(t); got["f.txt"] != body {
				t.Fatalf("listed through the proxy: %d files, f.txt %d bytes", len(got), len(got["f.txt"]))
			}
			if data := p.Forwarded() - p.Control.Forwarded(); data < int64(len(body)) {
				t.Errorf("the data proxies forwarded %d bytes of a %d-byte upload (control: %d more)", data, len(body), p.Control.Forwarded()-before)
			}
			p.Cut()
			if err := c.NoOp(); err == nil {
				t.Errorf("NOOP succeeded on a cut control connection")
			}
		})
	}
}
