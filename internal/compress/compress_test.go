package compress

import (
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/distributor-dev/distributor/internal/compress/compresstest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.sha256 (only with a deliberate level or library change)")

// encodings lists every encoding.
func encodings() []Encoding { return []Encoding{Brotli, Gzip, Zstd} }

func encode(t testing.TB, e Encoding, p []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	n, err := new(Compressor).Copy(context.Background(), e, &b, bytes.NewReader(p))
	if err != nil {
		t.Fatalf("Copy %s: %v", e, err)
	}
	if n != int64(b.Len()) {
		t.Fatalf("Copy %s returned %d, wrote %d", e, n, b.Len())
	}
	return b.Bytes()
}

// decoders decode with the libraries the writers come from and, for gzip,
// the standard library.
func decoders(e Encoding) map[string]func(io.Reader) (io.Reader, error) {
	switch e {
	case Gzip:
		return map[string]func(io.Reader) (io.Reader, error){
			"klauspost": func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
			"stdlib":    func(r io.Reader) (io.Reader, error) { return stdgzip.NewReader(r) },
		}
	case Brotli:
		return map[string]func(io.Reader) (io.Reader, error){
			"andybalholm": func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil },
		}
	default:
		return map[string]func(io.Reader) (io.Reader, error){
			"klauspost": func(r io.Reader) (io.Reader, error) {
				d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
				return d, err
			},
		}
	}
}

var cli = map[Encoding]string{Gzip: "gzip", Brotli: "brotli", Zstd: "zstd"}

func TestRoundTrip(t *testing.T) {
	inputs := map[string][]byte{
		"empty":  nil,
		"byte":   []byte("x"),
		"html":   compresstest.ReportText(7, 0, 300_000),
		"csv":    compresstest.ReportText(7, 1, 100_000),
		"json":   compresstest.ReportText(7, 2, 100_000),
		"binary": bytes.Repeat([]byte{0, 255, 1, 254}, 50_000),
	}
	for _, e := range encodings() {
		for name, in := range inputs {
			z := encode(t, e, in)
			for lib, dec := range decoders(e) {
				r, err := dec(bytes.NewReader(z))
				if err != nil {
					t.Fatalf("%s %s: %s reader: %v", e, name, lib, err)
				}
				out, err := io.ReadAll(r)
				if err != nil || !bytes.Equal(out, in) {
					t.Errorf("%s %s: %s decoded %d bytes (err %v), want the %d input bytes", e, name, lib, len(out), err, len(in))
				}
			}
			tool := cli[e]
			if _, err := exec.LookPath(tool); err != nil {
				t.Logf("%s not installed: its round trip is not checked", tool)
				continue
			}
			cmd := exec.Command(tool, "-dc")
			cmd.Stdin = bytes.NewReader(z)
			out, err := cmd.Output()
			if err != nil || !bytes.Equal(out, in) {
				t.Errorf("%s %s: %s -dc gave %d bytes (err %v), want the %d input bytes", e, name, tool, len(out), err, len(in))
			}
		}
	}
}

func TestEmptyInput(t *testing.T) {
	for _, e := range encodings() {
		if z := encode(t, e, nil); len(z) == 0 {
			t.Errorf("%s of nothing is no bytes, want a valid empty stream", e)
		}
	}
}

func TestDeterministic(t *testing.T) {
	in := compresstest.ReportText(3, 0, 200_000)
	for _, e := range encodings() {
		want := sha256.Sum256(encode(t, e, in))
		var wg sync.WaitGroup
		sums := make([][32]byte, 4)
		for i := range sums {
			wg.Go(func() { sums[i] = sha256.Sum256(encode(t, e, in)) })
		}
		wg.Wait()
		for i, s := range sums {
			if s != want {
				t.Errorf("%s: encoding %d on its own goroutine differs from the first", e, i)
			}
		}
		// A Compressor's reset writers give the bytes of new ones, after
		// another input, after a cancelled copy.
		var c Compressor
		ctx, cancel := context.WithCancel(context.Background())
		for i, run := range []func(io.Writer) error{
			func(w io.Writer) error { _, err := c.Copy(context.Background(), e, w, bytes.NewReader(in)); return err },
			func(io.Writer) error {
				_, err := c.Copy(context.Background(), e, io.Discard, bytes.NewReader(compresstest.ReportText(4, 1, 50_000)))
				return err
			},
			func(w io.Writer) error { _, err := c.Copy(context.Background(), e, w, bytes.NewReader(in)); return err },
			func(io.Writer) error {
				_, err := c.Copy(ctx, e, io.Discard, &cancellingReader{cancel: cancel})
				if !errors.Is(err, context.Canceled) {
					return fmt.Errorf("cancelled copy: %v", err)
				}
				return nil
			},
			func(w io.Writer) error { _, err := c.Copy(context.Background(), e, w, bytes.NewReader(in)); return err },
		} {
			var b bytes.Buffer
			if err := run(&b); err != nil {
				t.Fatal(err)
			}
			if b.Len() > 0 && sha256.Sum256(b.Bytes()) != want {
				t.Errorf("%s: copy %d of a reused Compressor differs from a new writer's", e, i)
			}
		}
		// Writes of another size give the same bytes: the stream, not the calls, decides.
		var b bytes.Buffer
		w, err := NewWriter(e, &b)
		if err != nil {
			t.Fatal(err)
		}
		for p := in; len(p) > 0; p = p[min(len(p), 1000):] {
			if _, err := w.Write(p[:min(len(p), 1000)]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(b.Bytes()) != want {
			t.Errorf("%s: 1,000-byte writes give other bytes than 64 KiB reads", e)
		}
	}
}

func TestGzipHeaderCarriesNoNameOrTime(t *testing.T) {
	z := encode(t, Gzip, []byte("hello"))
	r, err := stdgzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "" || r.Comment != "" || !r.ModTime.IsZero() || r.OS != gzipOS || len(r.Extra) != 0 {
		t.Errorf("gzip header: name %q comment %q time %v OS %d extra %d bytes; want all empty and OS %d",
			r.Name, r.Comment, r.ModTime, r.OS, len(r.Extra), gzipOS)
	}
}

// TestGolden fails when a level, a window or a library update changes the
// bytes: every unchanged output of a compressing destination would be
// rewritten, which the release notes must call out. testdata/golden.sha256
// holds the sha256 of each encoding of testdata/input.txt and of nothing.
func TestGolden(t *testing.T) {
	in, err := os.ReadFile("testdata/input.txt")
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, e := range encodings() {
		for _, c := range []struct {
			name string
			in   []byte
		}{{"input.txt", in}, {"empty", nil}} {
			sum := sha256.Sum256(encode(t, e, c.in))
			fmt.Fprintf(&got, "%s  %s %s\n", hex.EncodeToString(sum[:]), e, c.name)
		}
	}
	if *update {
		if err := os.WriteFile("testdata/golden.sha256", []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/golden.sha256")
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("compressed bytes changed (a level, window or library version): call it out in the release notes and run with -update\ngot:\n%swant:\n%s", got.String(), want)
	}
}

func TestUnknownEncoding(t *testing.T) {
	if _, err := NewWriter("lz4", io.Discard); err == nil {
		t.Error("NewWriter(lz4) succeeded")
	}
	for e, want := range map[Encoding][2]string{Brotli: {".br", "brotli"}, Gzip: {".gz", "gzip"}, Zstd: {".zst", "zstd"}, "lz4": {"", ""}} {
		if got := [2]string{e.Suffix(), e.Transform()}; got != want {
			t.Errorf("%q: suffix and transform %q, want %q", e, got, want)
		}
	}
}

// cancellingReader is endless text that cancels its context on the first read.
type cancellingReader struct {
	cancel context.CancelFunc
	reads  int
}

func (r *cancellingReader) Read(p []byte) (int, error) {
	r.reads++
	r.cancel()
	for i := range p {
		p[i] = "report text "[i%12]
	}
	return len(p), nil
}

func TestCancelStopsWithinOneBuffer(t *testing.T) {
	for _, e := range encodings() {
		ctx, cancel := context.WithCancel(context.Background())
		src := &cancellingReader{cancel: cancel}
		_, err := new(Compressor).Copy(ctx, e, io.Discard, src)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Copy after cancel: %v, want context.Canceled", e, err)
		}
		if src.reads != 1 {
			t.Errorf("%s: %d reads after the cancel, want 1 (one buffer)", e, src.reads)
		}
	}
}

func TestWriteErrorIsReturned(t *testing.T) {
	boom := errors.New("disk full")
	in := compresstest.ReportText(1, 0, 300_000)
	for _, e := range encodings() {
		var c Compressor
		_, err := c.Copy(context.Background(), e, failingWriter{boom}, bytes.NewReader(in))
		if !errors.Is(err, boom) {
			t.Errorf("%s: Copy into a failing writer: %v, want %v", e, err, boom)
		}
		var b bytes.Buffer
		if _, err := c.Copy(context.Background(), e, &b, bytes.NewReader(in)); err != nil || !bytes.Equal(b.Bytes(), encode(t, e, in)) {
			t.Errorf("%s: the Compressor's next copy after a failed one: err %v, or other bytes than a new writer's", e, err)
		}
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

// textStream is n bytes of report text: 8 generated MiB over and over (more
// than any window apart, so no encoder sees a repeat), calling sample before
// each MiB it hands out.
type textStream struct {
	n      int
	chunks [][]byte
	i      int
	buf    []byte
	sample func()
}

func newTextStream(n int, sample func()) *textStream {
	s := &textStream{n: n, sample: sample}
	for i := range 8 {
		s.chunks = append(s.chunks, compresstest.ReportText(11, i, 1<<20)[:1<<20])
	}
	return s
}

func (s *textStream) Read(p []byte) (int, error) {
	if len(s.buf) == 0 {
		if s.n <= 0 {
			return 0, io.EOF
		}
		s.sample()
		s.buf = s.chunks[s.i%len(s.chunks)][:min(s.n, 1<<20)]
		s.i++
		s.n -= len(s.buf)
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// TestMemoryBounded compresses 256 MiB of text per encoding and samples the
// live heap (HeapAlloc after a collection) before every MiB read: it
// must stay under the bound NewWriter documents, whatever the input size.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 3 x 256 MiB")
	}
	const size = 256 << 20
	bounds := map[Encoding]uint64{Gzip: 2 << 20, Brotli: 16 << 20, Zstd: 10 << 20} // NewWriter's, and some slack
	for _, e := range encodings() {
		var ms runtime.MemStats
		var base, peak uint64
		src := newTextStream(size, func() {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc-min(ms.HeapAlloc, base))
		})
		runtime.GC()
		runtime.GC() // and what sync.Pools of the previous encoding kept
		runtime.ReadMemStats(&ms)
		base = ms.HeapAlloc
		n, err := new(Compressor).Copy(context.Background(), e, io.Discard, src)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: 256 MiB to %d bytes, live heap at most %.1f MiB above the start", e, n, float64(peak)/(1<<20))
		if peak > bounds[e] {
			t.Errorf("%s: live heap grew %.1f MiB, bound %d MiB", e, float64(peak)/(1<<20), bounds[e]>>20)
		}
	}
}
