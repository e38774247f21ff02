package sftp

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sftplib "github.com/pkg/sftp"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
)

// TestWriteSessions: on OpenSSH, writes that overlap get sessions of their
// own (server processes of their own, whose fsyncs overlap), up to
// writeSessions; a write on an idle connection takes the first session. On
// ProFTPD (one process, which mixes up the handles of several sessions) and
// the in-process server every write has the first session.
func TestWriteSessions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(t *testing.T) Options
		want int
	}{
		{"sshd", sshdOptions, writeSessions},
		{"proftpd", func(t *testing.T) Options { return loginOptions(sftptest.ProFTPD(t).FreshRoot(t)) }, 1},
		{"inprocess", func(t *testing.T) Options { return newTestServer(t).options() }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := storeConn(open(t, tc.opts(t)))
			seen := map[*sftplib.Client]bool{}
			var releases []func()
			for range writeSessions + 2 {
				sc, release := c.session()
				seen[sc] = true
				releases = append(releases, release)
			}
			if len(seen) != tc.want || !seen[c.sftp] {
				t.Errorf("%d overlapping writes used %d sessions (the first among them: %v), want %d", writeSessions+2, len(seen), seen[c.sftp], tc.want)
			}
			for _, release := range releases {
				release()
			}
			if sc, release := c.session(); sc != c.sftp {
				t.Error("a write on an idle connection did not take the first session")
			} else {
				release()
			}
		})
	}
}

// TestConcurrentPutsOverSessions: overlapping Puts on OpenSSH, spread over
// the sessions, all land with their own content.
func TestConcurrentPutsOverSessions(t *testing.T) {
	s := open(t, sshdOptions(t))
	var wg sync.WaitGroup
	for i := range 4 * writeSessions {
		wg.Go(func() {
			data := fmt.Sprint(i)
			if _, err := s.Put(t.Context(), fmt.Sprintf("d%d/f%d", i%3, i), strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range 4 * writeSessions {
		if data, _, err := s.Get(t.Context(), fmt.Sprintf("d%d/f%d", i%3, i)); err != nil || string(data) != fmt.Sprint(i) {
			t.Errorf("f%d: %q, %v", i, data, err)
		}
	}
	if c := storeConn(s); len(c.sessions) < 2 {
		t.Errorf("%d overlapping Puts used %d session(s)", 4*writeSessions, len(c.sessions))
	}
}

// TestStallWhileASessionOpens: a server that stops answering while a write
// opens a session (a partition) does not hold the writes waiting for it
// forever: the keepalive closes the connection, the open fails, and after
// the heal the Store writes again.
func TestStallWhileASessionOpens(t *testing.T) {
	opts, p := viaProxy(t, sshdOptions(t))
	s := open(t, opts)
	c := storeConn(s)
	_, release := c.session() // busy: the next write opens a session
	defer release()
	p.Stall()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, release := c.session()
		release()
	}()
	select {
	case <-done:
	case <-time.After(10 * (testKeepaliveInterval + testKeepaliveTimeout)):
		t.Fatal("a session still opening long after the server stalled")
	}
	if !c.dead.Load() {
		t.Error("the connection is still marked alive")
	}
	p.Heal()
	put(t, s, "after", "1")
}
