package retry

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

func benchStore(b *testing.B) storage.Store {
	st, err := local.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return New(st, Options{})
}

// BenchmarkRetryPut: a replayable Put of 64 KiB through the retry wrapper
// (local disk below), no failure: the cost of the wrapper on the way.
func BenchmarkRetryPut(b *testing.B) {
	s := benchStore(b)
	data := bytes.Repeat([]byte("x"), 64<<10)
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		if _, err := s.Put(b.Context(), fmt.Sprintf("d/%d", i%64), bytes.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRetryPutIf: a lock-sized compare-and-swap through the wrapper.
func BenchmarkRetryPutIf(b *testing.B) {
	s := benchStore(b)
	data := []byte(`{"lock":"record of a holder, about a hundred bytes long, as the lock's is .........."}`)
	var v storage.Version
	for b.Loop() {
		var err error
		if v, err = storage.PutIf(b.Context(), s, "lock", data, v); err != nil {
			b.Fatal(err)
		}
	}
}
