package ftptest

import (
	"bufio"
	"io"
	"net"
	"sync/atomic"
	"testing"
)

// Counter is a TCP proxy in front of an FTP server's control port that
// counts the commands clients send through it: the lines before AUTH TLS,
// then one TLS application-data record per command (a client writes a
// command in one write). Data connections do not pass it.
type Counter struct {
	ln net.Listener
	n  atomic.Int64
}

// CountCommands starts a Counter in front of target (host:port) until the
// test ends.
func CountCommands(t testing.TB, target string) *Counter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Counter{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			t.Cleanup(func() { client.Close(); server.Close() })
			go io.Copy(client, server)
			go c.forward(server, client)
		}
	}()
	return c
}

// Port is the port clients connect to instead of the server's.
func (c *Counter) Port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// Take returns the commands counted since the last Take.
func (c *Counter) Take() int64 { return c.n.Swap(0) }

// forward copies the client's stream to the server, counting commands.
func (c *Counter) forward(server io.Writer, client io.Reader) {
	br := bufio.NewReader(client)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		c.n.Add(1)
		server.Write([]byte(line))
		if len(line) >= 8 && (line[:8] == "AUTH TLS" || line[:8] == "auth tls") {
			break
		}
	}
	header := make([]byte, 5)
	for {
		if _, err := io.ReadFull(br, header); err != nil {
			return
		}
		body := make([]byte, int(header[3])<<8|int(header[4]))
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		if header[0] == 23 { // application data
			c.n.Add(1)
		}
		server.Write(append(header, body...))
	}
}
