package local_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// BenchmarkPutParallel measures Put of 100 KiB objects to distinct paths
// from several goroutines at once, the way the executor publishes (4 jobs
// on local disk). Each Put fsyncs its file and its directory, so on most
// disks this measures the fsync latency the goroutines overlap. ns/op is
// wall time per object, across all goroutines.
func BenchmarkPutParallel(b *testing.B) {
	const size = 100 << 10
	for _, par := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("100KiB/goroutines=%d", par*runtime.GOMAXPROCS(0)), func(b *testing.B) {
			s := newStore(b, b.TempDir())
			data := bytes.Repeat([]byte{'x'}, size)
			var n atomic.Int64
			b.SetBytes(size)
			b.ReportAllocs()
			b.SetParallelism(par)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					p := fmt.Sprintf("d%03d/obj%07d", i%100, i)
					if _, err := s.Put(b.Context(), p, bytes.NewReader(data), size, storage.PutOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkWriteFileBaseline is the floor Put is compared with: os.WriteFile
// of the same 100 KiB to a new path, without fsync, temporary file or
// rename. The gap to BenchmarkPutParallel/jobs=1 is the price of
// durability and atomicity.
func BenchmarkWriteFileBaseline(b *testing.B) {
	const size = 100 << 10
	dir := b.TempDir()
	for i := range 100 {
		if err := os.Mkdir(filepath.Join(dir, fmt.Sprintf("d%03d", i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	data := bytes.Repeat([]byte{'x'}, size)
	b.SetBytes(size)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		p := filepath.Join(dir, fmt.Sprintf("d%03d/obj%07d", i%100, i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCatalogStream measures the streaming catalog calls on objects
// of 1 MiB and 64 MiB: ReadVersioned (read and hash), and PutIfStream
// replacing the object by compare-and-swap (hash the old content, write,
// fsync, rename). Nothing holds the object whole: B/op is the buffers of
// the copy (32 KiB per MiB written, garbage at once), about 2% of the size.
func BenchmarkCatalogStream(b *testing.B) {
	for _, size := range []int64{1 << 20, 64 << 20} {
		name := fmt.Sprintf("%dMiB", size>>20)
		data := bytes.Repeat([]byte("{\"path\":\"reports/2026/xy.html\"}\n"), int(size/32))
		b.Run("ReadVersioned/"+name, func(b *testing.B) {
			s := newStore(b, b.TempDir())
			if _, err := storage.PutIf(b.Context(), s, "catalog", data, ""); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.ReadVersioned(b.Context(), "catalog", func(r io.Reader) error {
					_, err := io.Copy(io.Discard, r)
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("PutIfStream/"+name, func(b *testing.B) {
			s := newStore(b, b.TempDir())
			v, err := storage.PutIf(b.Context(), s, "catalog", data, "")
			if err != nil {
				b.Fatal(err)
			}
			r := bytes.NewReader(data)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if v, err = s.Put(b.Context(), "catalog", struct{ io.ReadSeeker }{r}, size, storage.IfVersion(v)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
