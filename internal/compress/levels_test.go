package compress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/distributor-dev/distributor/internal/compress/compresstest"
)

// The P1 workload: 2,000 files of 100 KB of report text.
const (
	p1Seed  = 1
	p1Files = 2000
	p1Size  = 100_000
)

// p1Sample returns every step-th file of the P1 workload.
func p1Sample(step int) [][]byte {
	var files [][]byte
	for i := 0; i < p1Files; i += step {
		files = append(files, compresstest.ReportText(p1Seed, i, p1Size))
	}
	return files
}

// cliSize is the total size of the files compressed one by one by a command
// line tool (gzip -9, brotli -q 11).
func cliSize(t testing.TB, files [][]byte, tool string, args ...string) int64 {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s not installed", tool)
	}
	name := filepath.Join(t.TempDir(), "f")
	var total int64
	for _, f := range files {
		if err := os.WriteFile(name, f, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool, append(args, "-c", name)...).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", tool, strings.Join(args, " "), err)
		}
		total += int64(len(out))
	}
	return total
}

// measure runs fn on every file and returns the total size it wrote and the
// MB (10^6 bytes) of input per CPU second.
func measure(t testing.TB, files [][]byte, fn func(io.Writer, []byte) error) (int64, float64) {
	t.Helper()
	var in, out int64
	var buf bytes.Buffer
	start := cpuTime()
	for _, f := range files {
		buf.Reset()
		if err := fn(&buf, f); err != nil {
			t.Fatal(err)
		}
		in += int64(len(f))
		out += int64(buf.Len())
	}
	return out, float64(in) / 1e6 / (cpuTime() - start).Seconds()
}

// encodeWith returns an encoder with settings s that reuses its writer, as a
// Compressor does.
func encodeWith(e Encoding, s settings) func(io.Writer, []byte) error {
	var zw resetWriter
	return func(w io.Writer, p []byte) error {
		if zw == nil {
			nw, err := newWriter(e, w, s)
			if err != nil {
				return err
			}
			zw = nw.(resetWriter)
		} else {
			zw.Reset(w)
		}
		if _, err := zw.Write(p); err != nil {
			return err
		}
		return zw.Close()
	}
}

// copyAndHash is the plain publish's own work on a file: copy and hash it.
func copyAndHash(w io.Writer, p []byte) error {
	h := sha256.New()
	_, err := io.Copy(io.MultiWriter(w, h), bytes.NewReader(p))
	h.Sum(nil)
	return err
}

var fixed = settings{GzipLevel, BrotliQuality, BrotliLGWin, ZstdLevel, ZstdWindow}

// levelFiles is what TestLevelTable measures: every N-th P1 file
// (DISTRIBUTOR_COMPRESS_LEVELS=N) or the files a list names
// (DISTRIBUTOR_COMPRESS_FILES=list, one path a line).
func levelFiles(t *testing.T) [][]byte {
	if list := os.Getenv("DISTRIBUTOR_COMPRESS_FILES"); list != "" {
		names, err := os.ReadFile(list)
		if err != nil {
			t.Fatal(err)
		}
		var files [][]byte
		for _, name := range strings.Fields(string(names)) {
			f, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		return files
	}
	step := 0
	fmt.Sscan(os.Getenv("DISTRIBUTOR_COMPRESS_LEVELS"), &step)
	if step <= 0 {
		t.Skip("set DISTRIBUTOR_COMPRESS_LEVELS=N to measure on every N-th P1 file, or DISTRIBUTOR_COMPRESS_FILES=list")
	}
	return p1Sample(step)
}

// TestLevelTable prints the table behind the fixed levels (docs/design.md,
// "Precompression"): each candidate's size against gzip -9's and its MB per
// CPU second. It takes a minute on every 20th P1 file.
func TestLevelTable(t *testing.T) {
	files := levelFiles(t)
	var in int64
	for _, f := range files {
		in += int64(len(f))
	}
	gz9 := cliSize(t, files, "gzip", "-9", "-n")
	br11 := cliSize(t, files, "brotli", "-q", "11")
	t.Logf("%d files, %d bytes; gzip -9: %d (%.1f%% of the input); brotli -q 11: %+.1f%% vs gzip -9",
		len(files), in, gz9, 100*float64(gz9)/float64(in), 100*(float64(br11)/float64(gz9)-1))
	t.Logf("| setting | size vs gzip -9 | MB/s (one core, CPU time) |")
	row := func(name string, fn func(io.Writer, []byte) error) {
		size, mbps := measure(t, files, fn)
		t.Logf("| %s | %+.1f%% | %.0f |", name, 100*(float64(size)/float64(gz9)-1), mbps)
	}
	row("copy + sha256", copyAndHash)
	for _, l := range []int{6, 7, 8, 9} {
		s := fixed
		s.gzipLevel = l
		row(fmt.Sprintf("gzip %d", l), encodeWith(Gzip, s))
	}
	for _, q := range []int{4, 5, 6, 9, 10, 11} {
		s := fixed
		s.brotliQuality = q
		row(fmt.Sprintf("br %d", q), encodeWith(Brotli, s))
	}
	for _, l := range []zstd.EncoderLevel{zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
		s := fixed
		s.zstdLevel = l
		row(fmt.Sprintf("zstd %v", l), encodeWith(Zstd, s))
	}
	br, gz := encodeWith(Brotli, fixed), encodeWith(Gzip, fixed)
	row("[br, gzip] as fixed", func(w io.Writer, p []byte) error {
		if err := br(w, p); err != nil {
			return err
		}
		return gz(w, p)
	})
}

// TestP1SizesAgainstCLI holds the fixed levels to what the size table says,
// on every 20th P1 file (sizes are deterministic: no clock involved): gzip
// within 3% of gzip -9's size, brotli smaller than gzip -9's.
func TestP1SizesAgainstCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs gzip -9 on 100 files")
	}
	files := p1Sample(20)
	gz9 := cliSize(t, files, "gzip", "-9", "-n")
	sizes := map[Encoding]int64{}
	for _, e := range []Encoding{Gzip, Brotli} {
		for _, f := range files {
			sizes[e] += int64(len(encode(t, e, f)))
		}
	}
	t.Logf("gzip -9: %d; gzip: %+.1f%%; br: %+.1f%%", gz9,
		100*(float64(sizes[Gzip])/float64(gz9)-1), 100*(float64(sizes[Brotli])/float64(gz9)-1))
	if float64(sizes[Gzip]) > 1.03*float64(gz9) {
		t.Errorf("gzip level %d: %d bytes, more than 3%% over gzip -9's %d", GzipLevel, sizes[Gzip], gz9)
	}
	if sizes[Brotli] >= gz9 {
		t.Errorf("brotli quality %d: %d bytes, not smaller than gzip -9's %d", BrotliQuality, sizes[Brotli], gz9)
	}
}

// BenchmarkP1 compresses the whole P1 workload (2,000 x 100 KB, 200 MB) per
// iteration with a Compressor at the fixed levels, the [br, gzip] pair, and
// the plain publish's copy + sha256 for scale; ratio is output/input,
// MB/cpu-s the input per second of the process's CPU time.
func BenchmarkP1(b *testing.B) {
	files := p1Sample(1)
	var in int64
	for _, f := range files {
		in += int64(len(f))
	}
	var c Compressor
	compress := func(es ...Encoding) func(io.Writer, []byte) error {
		return func(w io.Writer, p []byte) error {
			for _, e := range es {
				if _, err := c.Copy(context.Background(), e, w, bytes.NewReader(p)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	for _, c := range []struct {
		name string
		fn   func(io.Writer, []byte) error
	}{
		{"copy+sha256", copyAndHash},
		{"gzip", compress(Gzip)},
		{"br", compress(Brotli)},
		{"zstd", compress(Zstd)},
		{"br+gzip", compress(Brotli, Gzip)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(in)
			var out int64
			var buf bytes.Buffer
			start := cpuTime()
			for b.Loop() {
				out = 0
				for _, f := range files {
					buf.Reset()
					if err := c.fn(&buf, f); err != nil {
						b.Fatal(err)
					}
					out += int64(buf.Len())
				}
			}
			b.ReportMetric(float64(out)/float64(in), "ratio")
			// On a shared machine the CPU time is the steadier measure.
			b.ReportMetric(float64(in)*float64(b.N)/1e6/(cpuTime()-start).Seconds(), "MB/cpu-s")
		})
	}
}

// settings are the knobs the level table varies (NewWriter fixes them).
type settings struct {
	gzipLevel, brotliQuality, brotliLGWin int
	zstdLevel                             zstd.EncoderLevel
	zstdWindow                            int
}

// newWriter is NewWriter with settings s.
func newWriter(e Encoding, dst io.Writer, s settings) (io.WriteCloser, error) {
	switch e {
	case Gzip:
		w, err := gzip.NewWriterLevel(dst, s.gzipLevel)
		if err == nil {
			w.Header = gzip.Header{OS: gzipOS}
		}
		return w, err
	case Brotli:
		return brotli.NewWriterOptions(dst, brotli.WriterOptions{Quality: s.brotliQuality, LGWin: s.brotliLGWin}), nil
	}
	return zstd.NewWriter(dst, zstd.WithEncoderLevel(s.zstdLevel), zstd.WithWindowSize(s.zstdWindow),
		zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true))
}
