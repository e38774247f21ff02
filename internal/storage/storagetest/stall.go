package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// HangBound is how long a call may take to fail before a test calls it
// hung: generous, so that the tests never depend on the machine's speed,
// yet far below what a missing deadline would take (forever, or minutes of
// retries). It grows with the test-wide time factor.
var HangBound = testtime.Scale(10 * time.Second)

// Bounded runs fn and returns its error, failing the test if fn has not
// returned within HangBound. It logs how long fn took.
func Bounded(t testing.TB, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- fn() }()
	select {
	case err := <-done:
		t.Logf("%s returned after %v: %v", what, time.Since(start).Round(time.Millisecond), err)
		return err
	case <-time.After(HangBound):
		t.Fatalf("%s still blocked after %v", what, HangBound)
		return nil
	}
}

// Partition is a network fault between a store and its server, such as a
// faultproxy.Proxy: Stall partitions the network (connections stay open,
// no byte flows), Heal ends the partition.
type Partition interface {
	Stall()
	Heal()
}

// PartitionedStores runs fn once for every server an adapter's tests use
// (each as a subtest), with a fresh store that reaches its server through
// the partition p and has the tests' short deadlines.
type PartitionedStores func(t *testing.T, fn func(t *testing.T, s storage.Store, p Partition))

// StalledPut checks that a Put of size bytes whose connection stops
// carrying bytes half-way (a partition: the TCP connection stays open,
// nothing flows) fails within HangBound instead of hanging, stores
// nothing, and that once the network heals the same store works again.
func StalledPut(t *testing.T, stores PartitionedStores, size int) {
	stores(t, func(t *testing.T, s storage.Store, p Partition) {
		put(t, s, "before", "before")
		r := newPausingReader(bytes.NewReader(bytes.Repeat([]byte("0123456789abcdef"), size/16)), 1<<20)
		errc := make(chan error, 1)
		go func() {
			_, err := s.Put(context.Background(), "big", r, int64(size), storage.PutOptions{})
			errc <- err
		}()
		select {
		case <-r.paused: // 1 MiB went out; the rest follows into the stall
		case err := <-errc:
			t.Fatalf("Put ended before the stall: %v", err)
		}
		p.Stall()
		close(r.resume)
		if err := Bounded(t, "Put", func() error { return <-errc }); err == nil {
			t.Fatal("Put into a stalled server succeeded")
		}
		p.Heal()
		if data, _, err := s.Get(t.Context(), "before"); err != nil || string(data) != "before" {
			t.Fatalf("Get after the heal: %q, %v", data, err)
		}
		put(t, s, "after", "after")
		if _, err := s.Stat(t.Context(), "big"); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Stat of the stalled Put's object: %v, want ErrNotExist", err)
		}
	})
}

// StalledReads checks that Get and Stat whose server stops answering, and
// a streaming read stalled half-way through the transfer of an object of
// size bytes, fail within HangBound, and that the store works again after
// the heal. size should exceed the socket buffers, so that a stall
// half-way leaves most of the object on the server's side.
func StalledReads(t *testing.T, stores PartitionedStores, size int) {
	content := bytes.Repeat([]byte("abcdefghijklmnop"), size/16)
	for _, tc := range []struct {
		name string
		// run stalls the proxy at the right moment and returns the call
		// to bound.
		run func(t *testing.T, s storage.Store, p Partition) func() error
	}{
		{"Get", func(t *testing.T, s storage.Store, p Partition) func() error {
			p.Stall()
			return func() error { _, _, err := s.Get(context.Background(), "big"); return err }
		}},
		{"Stat", func(t *testing.T, s storage.Store, p Partition) func() error {
			p.Stall()
			return func() error { _, err := s.Stat(context.Background(), "big"); return err }
		}},
		{"Open mid-transfer", func(t *testing.T, s storage.Store, p Partition) func() error {
			rc, err := s.Open(context.Background(), "big")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rc.Close() })
			if _, err := io.ReadFull(rc, make([]byte, 64<<10)); err != nil {
				t.Fatal(err)
			}
			p.Stall()
			return func() error {
				n, err := io.Copy(io.Discard, rc)
				t.Logf("read %d of %d bytes after the stall", n, size-64<<10)
				return err
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stores(t, func(t *testing.T, s storage.Store, p Partition) {
				// The setup goes through the store's short test timeouts
				// too: on a loaded machine a server can take longer than
				// them to accept the object. What this test bounds is the
				// stalled call below, so the setup may try again.
				var err error
				for attempt := 1; attempt <= 3; attempt++ {
					if _, err = s.Put(t.Context(), "big", bytes.NewReader(content), int64(size), storage.PutOptions{}); err == nil {
						break
					}
					t.Logf("setup Put, attempt %d: %v", attempt, err)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := Bounded(t, tc.name, tc.run(t, s, p)); err == nil {
					t.Fatalf("%s from a stalled server succeeded", tc.name)
				}
				p.Heal()
				data, _, err := s.Get(t.Context(), "big")
				if err != nil || !bytes.Equal(data, content) {
					t.Fatalf("Get after the heal: %d bytes, %v", len(data), err)
				}
			})
		})
	}
}

// pausingReader yields the bytes of r; after the first n it blocks, once,
// until resume is closed, having closed paused.
type pausingReader struct {
	r      io.Reader
	n      int64
	paused chan struct{}
	resume chan struct{}
	once   sync.Once
}

func newPausingReader(r io.Reader, n int64) *pausingReader {
	return &pausingReader{r: r, n: n, paused: make(chan struct{}), resume: make(chan struct{})}
}

func (p *pausingReader) Read(b []byte) (int, error) {
	if p.n <= 0 {
		p.once.Do(func() {
			close(p.paused)
			<-p.resume
		})
		return p.r.Read(b)
	}
	if int64(len(b)) > p.n {
		b = b[:p.n]
	}
	n, err := p.r.Read(b)
	p.n -= int64(n)
	return n, err
}
