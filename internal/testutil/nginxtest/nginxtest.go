// Package nginxtest runs a private, real nginx for tests of what a web
// server makes of published files: the precompressed sidecars P.gz and
// P.br of spec 3.4, served by gzip_static and brotli_static.
// scripts/servers/nginx.sh installs Debian's nginx and
// libnginx-mod-http-brotli-static.
package nginxtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// brotliModule is where Debian's libnginx-mod-http-brotli-static puts
// the module.
const brotliModule = "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so"

// config is nginx.conf: the prefix directory (%[1]s) holds the pid, the logs
// and the temp paths, %[2]s is the user directive, %[3]s the address, %[4]s
// the root and %[5]s the brotli_static module. Only precompressed sidecars
// are served compressed: gzip (on-the-fly compression) is off.
const config = `load_module %[5]s;
%[2]s
daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 64; }
http {
  access_log %[1]s/access.log;
  client_body_temp_path %[1]s/client_body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  types {
    text/html html; text/css css; text/javascript js mjs; image/svg+xml svg;
    application/json json; application/xml xml; text/plain txt md; text/csv csv;
  }
  default_type application/octet-stream;
  server {
    listen %[3]s;
    root %[4]s;
    index index.html;
    gzip off;
    gzip_static on;
    brotli_static on;
  }
}
`

// Start starts nginx (from PATH, else /usr/sbin/nginx) serving root with
// gzip_static and brotli_static on, on 127.0.0.1, and returns its base URL
// (http://127.0.0.1:PORT, no trailing slash) once it answers. nginx stops
// in t.Cleanup. Its configuration, logs and pid file are in a t.TempDir();
// when nginx does not start, the test fails with its error.log.
// When nginx or its brotli_static module is missing, the test is skipped
// (it fails under CI=true).
func Start(t testing.TB, root string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
	}
	for _, need := range []string{bin, brotliModule} {
		if _, err := os.Stat(need); err != nil {
			msg := fmt.Sprintf("nginx test server unavailable (%v): run scripts/servers/nginx.sh as root", err)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	root, err = filepath.Abs(root)
	if err != nil {
		t.Fatalf("nginxtest: root: %v", err)
	}
	// nginx inherits the listening socket (its NGINX variable names the
	// descriptor, as in a binary upgrade): no race for a free port, and
	// requests wait in the backlog until nginx serves them.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("nginxtest: listen: %v", err)
	}
	sock, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		t.Fatalf("nginxtest: listening socket: %v", err)
	}
	dir := t.TempDir()
	user := "" // nginx switches its workers to a user only when it runs as root
	if os.Getuid() == 0 {
		user = "user root;" // the workers read test files in 0700 temp directories
	}
	conf := filepath.Join(dir, "nginx.conf")
	text := fmt.Sprintf(config, dir, user, ln.Addr(), root, brotliModule)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatalf("nginxtest: %v", err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	cmd.Env = append(os.Environ(), "NGINX=3;")
	cmd.ExtraFiles = []*os.File{sock}
	err = cmd.Start()
	// nginx holds the only copy now: when it exits, the socket closes and
	// a request fails instead of waiting in the backlog.
	sock.Close()
	if err != nil {
		t.Fatalf("nginxtest: start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		// SIGTERM: a fast shutdown that ends the workers too (SIGKILL
		// would orphan them).
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		client.CloseIdleConnections()
	})
	url := "http://" + ln.Addr().String()
	if resp, err := client.Get(url + "/"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		t.Fatalf("nginxtest: nginx did not serve %s: %v; its error.log:\n%s", url, err, log)
	} else {
		resp.Body.Close()
	}
	return url
}

// client sends the Accept-Encoding it is told, and decodes nothing.
var client = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// Get fetches url sending exactly acceptEncoding as Accept-Encoding (none
// when it is ""), and returns the body as sent, undecoded, and the
// Content-Encoding header. A status other than 200 fails the test.
func Get(t testing.TB, url, acceptEncoding string) (body []byte, contentEncoding string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("nginxtest: %v", err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("nginxtest: GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("nginxtest: GET %s: reading the body: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("nginxtest: GET %s (Accept-Encoding %q): %s", url, acceptEncoding, resp.Status)
	}
	return body, resp.Header.Get("Content-Encoding")
}
