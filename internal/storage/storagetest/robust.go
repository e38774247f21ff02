// The conformance tests of cancellation, large objects and concurrency.

package storagetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// cancelReader cancels a context once it has yielded after bytes.
type cancelReader struct {
	r      io.Reader
	after  int
	cancel context.CancelFunc
}

func (r *cancelReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if r.after -= n; r.after <= 0 {
		r.cancel()
	}
	return n, err
}

func testContextCancelled(t *testing.T, s storage.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Put(ctx, "new", strings.NewReader("data"), 4, storage.PutOptions{}); err == nil {
		t.Error("Put with a cancelled context succeeded")
	}
	wantMissing(t, s, "new")
	put(t, s, "old", "old content")
	if _, err := s.Put(ctx, "old", strings.NewReader("data"), 4, storage.PutOptions{}); err == nil {
		t.Error("Put with a cancelled context succeeded")
	}
	wantContent(t, s, "old", "old content")

	// Cancelled while streaming a large object.
	for _, p := range []string{"old", "new"} {
		ctx, cancel := context.WithCancel(t.Context())
		data := payload(4<<20, 7)
		r := &cancelReader{r: bytes.NewReader(data), after: 64 << 10, cancel: cancel}
		_, err := s.Put(ctx, p, r, int64(len(data)), storage.PutOptions{})
		cancel()
		if err == nil {
			t.Errorf("Put(%q) cancelled mid-stream succeeded", p)
		}
	}
	wantContent(t, s, "old", "old content")
	wantMissing(t, s, "new")
	wantList(t, s, "", "old")
}

func testLargeObject(t *testing.T, s storage.Store) {
	ctx := t.Context()
	data := payload(5<<20+123, 42)
	// Hide bytes.Reader's WriterTo and Seeker: the store must stream.
	if _, err := s.Put(ctx, "big.bin", struct{ io.Reader }{bytes.NewReader(data)}, int64(len(data)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if info := stat(t, s, "big.bin"); info.Size != int64(len(data)) {
		t.Errorf("Stat size = %d, want %d", info.Size, len(data))
	}
	r, err := s.Open(ctx, "big.bin")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("Open read %d bytes that differ from the %d written", len(got), len(data))
	}
	if got, _ := get(t, s, "big.bin"); !bytes.Equal(got, data) {
		t.Errorf("Get read %d bytes that differ from the %d written", len(got), len(data))
	}
}

func testConcurrentPuts(t *testing.T, s storage.Store) {
	ctx := t.Context()
	const n = 8
	contents := make([][]byte, n)
	for i := range contents {
		contents[i] = payload(64<<10, uint64(100+i))
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := s.Put(ctx, "shared/obj", bytes.NewReader(contents[i]), int64(len(contents[i])), storage.PutOptions{}); err != nil {
				t.Errorf("Put %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	got, _ := get(t, s, "shared/obj")
	if !slices.ContainsFunc(contents, func(c []byte) bool { return bytes.Equal(c, got) }) {
		t.Error("after concurrent Puts the object matches none of the contents written")
	}
	wantList(t, s, "", "shared/obj")
}

func testReadersSeeWholeObjects(t *testing.T, s storage.Store) {
	ctx := t.Context()
	const size = 256 << 10
	a, b := bytes.Repeat([]byte{'a'}, size), bytes.Repeat([]byte{'b'}, size)
	putBytes(t, s, "obj", a)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range 10 {
			c := a
			if i%2 == 0 {
				c = b
			}
			if _, err := s.Put(ctx, "obj", bytes.NewReader(c), size, storage.PutOptions{}); err != nil {
				t.Errorf("Put: %v", err)
				return
			}
		}
	})
	// Read until the writer is done; fail (after it stops) on a torn read.
	var bad error
	for reads := 0; bad == nil; reads++ {
		select {
		case <-done:
			wg.Wait()
			return
		default:
		}
		data, _, err := s.Get(ctx, "obj")
		switch {
		case err != nil:
			bad = fmt.Errorf("Get during Puts: %w", err)
		case !bytes.Equal(data, a) && !bytes.Equal(data, b):
			bad = fmt.Errorf("read %d: Get saw a partial or mixed object (%d bytes)", reads, len(data))
		}
	}
	wg.Wait()
	t.Fatal(bad)
}
