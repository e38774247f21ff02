package ftp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/ftp"
	"github.com/distributor-dev/distributor/internal/storage/ftp/ftptest"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// The deadlines of the fault tests: a stalled server fails a call within
// about a second on an idle machine (they grow with the test-wide factor).
var (
	testIdle = testtime.Scale(time.Second)
	testDial = testtime.Scale(time.Second)
)

// partitioned runs fn on each reference server with a fresh store that
// reaches it through an ftptest.Proxy (control and data connections) and
// has the tests' short deadlines.
func partitioned(t *testing.T, fn func(t *testing.T, s storage.Store, p storagetest.Partition)) {
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		p := l.FreshRoot(t).Proxy(t)
		fn(t, open(t, p.Login(), short), p)
	})
}

func short(o *ftp.Options) { o.IdleTimeout, o.DialTimeout = testIdle, testDial }

// TestStalledPut: a Put whose server stops answering half-way fails within
// the bound and stores nothing; the store works after the heal.
func TestStalledPut(t *testing.T) { storagetest.StalledPut(t, partitioned, 8<<20) }

// TestStalledReads: Get, Stat and a streaming read of a stalled server fail
// within the bound.
func TestStalledReads(t *testing.T) { storagetest.StalledReads(t, partitioned, 8<<20) }

// TestStalledList: a List of a stalled server fails within the bound.
func TestStalledList(t *testing.T) {
	partitioned(t, func(t *testing.T, s storage.Store, p storagetest.Partition) {
		put(t, s, "a/b/c", "x")
		p.Stall()
		err := storagetest.Bounded(t, "List", func() error {
			return s.List(context.Background(), "", func(storage.Info) error { return nil })
		})
		if err == nil {
			t.Fatal("List of a stalled server succeeded")
		}
		p.Heal()
		if got := list(t, s, ""); len(got) != 1 || got[0] != "a/b/c" {
			t.Errorf("List after the heal = %q", got)
		}
	})
}

// TestCutUploadLeavesNothing: a Put whose connections are cut mid-upload
// fails, and leaves no temporary file once SweepTemp ran.
func TestCutUploadLeavesNothing(t *testing.T) {
	for _, server := range ftptest.Servers {
		t.Run(server, func(t *testing.T) {
			l := ftptest.Real(t, server).FreshRoot(t)
			p := l.Proxy(t)
			s := open(t, p.Login(), short)
			put(t, s, "d/before", "before")
			r := &gate{r: bytes.NewReader(make([]byte, 8<<20)), after: 1 << 20, reached: make(chan struct{}), resume: make(chan struct{})}
			errc := make(chan error, 1)
			go func() {
				_, err := s.Put(context.Background(), "d/big", r, 8<<20, storage.PutOptions{})
				errc <- err
			}()
			<-r.reached
			p.Cut()
			close(r.resume)
			if err := storagetest.Bounded(t, "Put", func() error { return <-errc }); err == nil {
				t.Fatal("Put through a cut connection succeeded")
			}
			if _, err := s.SweepTemp(t.Context(), storage.SweepOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, name := range storagetest.DirEntries(t, l.Dir()) {
				if storage.IsTemp(name) {
					t.Errorf("temporary file %s left after the sweep", name)
				}
			}
			if got := list(t, s, ""); len(got) != 1 || got[0] != "d/before" {
				t.Errorf("List = %q, want d/before", got)
			}
		})
	}
}

// TestCancelReturnsPromptly: calls on a stalled server whose context is
// cancelled return with the cancellation, within the bound, though the
// store's deadlines are far longer: the connection (or the dial) is cut
// storage.AnswerGrace after the cancel.
func TestCancelReturnsPromptly(t *testing.T) {
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		p := l.FreshRoot(t).Proxy(t)
		s := open(t, p.Login(), func(o *ftp.Options) { o.IdleTimeout, o.DialTimeout = time.Hour, time.Hour })
		put(t, s, "f", "data")
		p.Stall()
		for _, call := range []struct {
			name string
			fn   func(ctx context.Context) error
		}{
			{"Get", func(ctx context.Context) error { _, _, err := s.Get(ctx, "f"); return err }},
			{"Put", func(ctx context.Context) error {
				_, err := s.Put(ctx, "g", strings.NewReader("g"), 1, storage.PutOptions{})
				return err
			}},
		} {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(50*time.Millisecond, cancel)
			if err := storagetest.Bounded(t, call.name, func() error { return call.fn(ctx) }); !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v, want context.Canceled", call.name, err)
			}
		}
	})
}

// gate yields r's bytes; after the first after bytes it closes reached,
// once, and waits for resume.
type gate struct {
	r       io.Reader
	after   int
	reached chan struct{}
	resume  chan struct{}
	passed  bool // reached is closed (the field stays: the test reads it)
}

func (g *gate) Read(b []byte) (int, error) {
	if g.after <= 0 {
		if !g.passed {
			g.passed = true
			close(g.reached)
			<-g.resume
		}
		return g.r.Read(b)
	}
	n, err := g.r.Read(b[:min(len(b), g.after)])
	g.after -= n
	return n, err
}

// list returns the paths List reports below prefix.
func list(t testing.TB, s storage.Store, prefix string) []string {
	t.Helper()
	var got []string
	if err := s.List(t.Context(), prefix, func(i storage.Info) error {
		got = append(got, i.Path)
		return nil
	}); err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return got
}

// TestLapseAfterCreateLeavesNothing: a write whose context ends right
// after its temporary file was created, before a byte went into it (a
// writer paused there resumes past its fence, and the lock cancels its
// context at its first check), fails and leaves no temporary file with no
// sweep: the lock's next holder swept before the file was made, and
// nothing else would remove it (docs/design.md, "Fencing" point 1).
func TestLapseAfterCreateLeavesNothing(t *testing.T) {
	eachServer(t, func(t *testing.T, l ftptest.Login) {
		l = l.FreshRoot(t)
		s := open(t, l)
		put(t, s, "d/before", "before") // the proofs, and d, are done
		for _, stage := range []bool{false, true} {
			ctx, cancel := context.WithCancelCause(t.Context())
			r := &lapsesAtRead{cancel: cancel}
			var err error
			if stage {
				var g storage.Staged
				if g, err = s.Stage(ctx, "d/f", r, 5, storage.PutOptions{}); err == nil {
					g.Abort(t.Context())
				}
			} else {
				_, err = s.Put(ctx, "d/f", r, 5, storage.PutOptions{})
			}
			if err == nil {
				t.Errorf("stage %t: a write whose context ended during it succeeded", stage)
			}
			for _, name := range storagetest.DirEntries(t, l.Dir()) {
				if storage.IsTemp(name) {
					t.Errorf("stage %t: temporary file %s left", stage, name)
				}
			}
		}
		if got := list(t, s, ""); len(got) != 1 || got[0] != "d/before" {
			t.Errorf("List = %q, want d/before", got)
		}
	})
}

// errLapsed is the cause lapsesAtRead cancels with.
var errLapsed = errors.New("fence lapsed")

// lapsesAtRead is a source whose first Read ends the write's context, as
// the lock cancels a resumed writer's context, and fails.
type lapsesAtRead struct{ cancel context.CancelCauseFunc }

func (r *lapsesAtRead) Read([]byte) (int, error) {
	r.cancel(errLapsed)
	return 0, errLapsed
}
