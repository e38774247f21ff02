package ftp_test

import (
	"bufio"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
)

// commandCounter is a TCP proxy in front of a server's control port that
// counts the commands a client sends: the lines before AUTH TLS, then one
// TLS application-data record per command (a command is one write). Data
// connections do not pass it.
type commandCounter struct {
	ln net.Listener
	n  atomic.Int64
}

func countCommands(t *testing.T, target string) *commandCounter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cc := &commandCounter{ln: ln}
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
			go cc.forward(server, client)
		}
	}()
	return cc
}

func (cc *commandCounter) port() int { return cc.ln.Addr().(*net.TCPAddr).Port }

// forward copies the client's stream to the server, counting commands.
func (cc *commandCounter) forward(server io.Writer, client io.Reader) {
	br := bufio.NewReader(client)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		cc.n.Add(1)
		server.Write([]byte(line))
		if strings.HasPrefix(strings.ToUpper(line), "AUTH TLS") {
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
			cc.n.Add(1)
		}
		server.Write(append(header, body...))
	}
}

// TestCommandCounts measures the commands a warm store (logged in, its
// proof done, its root known) sends for the Put of one small file, its Get,
// a List of a tree of five directories on four levels, and a PutCreate,
// and holds them to what the package promises: no command beyond the
// transfer's and the rename's, and one listing per directory (CWD too
// where the server lists with LIST). A transfer is EPSV and its command,
// and PRET before them where the server asks for it (Pure-FTPd).
func TestCommandCounts(t *testing.T) {
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		l = l.FreshRoot(t)
		cc := countCommands(t, net.JoinHostPort(l.Host, strconv.Itoa(l.Port)))
		s := open(t, l, func(o *ftp.Options) { o.Port, o.Connections = cc.port(), 1 })
		for _, p := range []string{"a/b/c/1", "a/b/c/2", "a/b/3", "a/4", "x/5"} {
			put(t, s, p, "x")
		}
		measure := func(what string, want int, fn func()) {
			before := cc.n.Load()
			fn()
			n := int(cc.n.Load() - before)
			t.Logf("%s: %d commands", what, n)
			if n > want {
				t.Errorf("%s: %d commands, want at most %d", what, n, want)
			}
		}
		transfer := 2 // EPSV, STOR, RETR, MLSD or LIST
		if l.Server == "pureftpd" {
			transfer++ // PRET
		}
		perDir := transfer
		if l.Server == "vsftpd" {
			perDir++ // CWD
		}
		measure("Put of a small file", transfer+2, func() { put(t, s, "small", "data") }) // RNFR, RNTO
		measure("Get", transfer, func() {
			if _, _, err := s.Get(t.Context(), "small"); err != nil {
				t.Fatal(err)
			}
		})
		measure("List of 5 directories", 5*perDir, func() {
			if got := list(t, s, ""); !slices.Contains(got, "a/b/c/2") || len(got) != 6 {
				t.Errorf("List = %q", got)
			}
		})
		looks := 2 // MLST and CWD of the guard
		if l.Server == "vsftpd" {
			looks = 3 // SIZE, CWD and CWD of the guard
		}
		measure("PutCreate of a new file", transfer+2+looks, func() {
			if _, err := s.Put(t.Context(), "new", strings.NewReader("n"), 1, storage.PutOptions{Mode: storage.PutCreate}); err != nil {
				t.Fatal(err)
			}
		})
	})
}
