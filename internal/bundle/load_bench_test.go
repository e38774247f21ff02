package bundle_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
)

// writeRandomBundle writes files random files of size bytes each into dir,
// spread over subdirectories of 100 files, and seals the bundle.
func writeRandomBundle(b *testing.B, dir string, files, size int) {
	b.Helper()
	rng := rand.NewChaCha8([32]byte{1})
	buf := make([]byte, size)
	for i := range files {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		rng.Read(buf)
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.bin", i)), buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	created := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	if _, err := bundle.Seal(b.Context(), dir, "bench.bundle", created); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLoad measures bundle.Load (parse the manifest, stat and hash
// every listed file, walk for unlisted files) over 2,000 files of 10 KiB
// (20 MB) and 200 of 100 KiB: what `validate` pays, and what a run with
// something to write pays before its first write (LoadShallow, then
// Bundle.VerifyFiles: the same work). The files stay in the page cache, so this
// is the CPU side: SHA-256 plus the per-file opens and stats.
func BenchmarkLoad(b *testing.B) {
	for _, c := range []struct{ files, size int }{{2000, 10 << 10}, {200, 100 << 10}} {
		b.Run(fmt.Sprintf("%dx%dKiB", c.files, c.size>>10), func(b *testing.B) {
			dir := b.TempDir()
			writeRandomBundle(b, dir, c.files, c.size)
			b.SetBytes(int64(c.files * c.size))
			b.ReportAllocs()
			for b.Loop() {
				bd, err := bundle.Load(b.Context(), dir)
				if err != nil {
					b.Fatal(err)
				}
				if len(bd.Manifest.Files) != c.files {
					b.Fatalf("loaded %d files, want %d", len(bd.Manifest.Files), c.files)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.files), "ns/file")
		})
	}
}

// BenchmarkLoadShallow measures bundle.LoadShallow over the same 2,000
// files: the manifest and every file's type and size, no bytes read. This
// is the bundle's share of a no-op run, which never hashes.
func BenchmarkLoadShallow(b *testing.B) {
	const files, size = 2000, 10 << 10
	dir := b.TempDir()
	writeRandomBundle(b, dir, files, size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bundle.LoadShallow(b.Context(), dir); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*files), "ns/file")
}

// BenchmarkOpenVerified measures streaming every file of a loaded bundle
// through OpenVerified (the reader a publish copies from), which hashes
// the bytes a second time. Load plus this is what a cold publish spends on
// SHA-256.
func BenchmarkOpenVerified(b *testing.B) {
	const files, size = 2000, 10 << 10
	dir := b.TempDir()
	writeRandomBundle(b, dir, files, size)
	bd, err := bundle.Load(b.Context(), dir)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 256<<10)
	b.SetBytes(files * size)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range bd.Manifest.Files {
			rc, err := bd.OpenVerified(f.Path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.CopyBuffer(io.Discard, rc, buf); err != nil {
				b.Fatal(err)
			}
			rc.Close()
		}
	}
}
