// Package compress encodes outputs for precompressed publishing (spec 3.4):
// the sidecars P.br, P.gz and P.zst of directory stores and the gzip-stored
// objects of object stores.
//
// What the engine's integration must keep:
//   - Deterministic bytes. The same input gives the same output on every run
//     and machine: no name, time or varying OS byte in a header, fixed levels
//     and windows, no concurrency that could reorder output. An unchanged
//     report then stays skip_same with compression on.
//   - Levels pinned. The levels below are chosen by measurement (docs/design.md,
//     "Precompression") and the libraries are pinned in go.mod; TestGolden fails
//     when either changes the bytes, which the release notes must then call out.
//   - The record describes the stored bytes. A sidecar's or a gzip-stored
//     object's catalog sha256 and size are those of the compressed bytes, so
//     verify stays byte-exact; hash what Copy writes, not what it reads.
//
// Memory is bounded whatever the input size: every encoder streams through a
// fixed window (see NewWriter's bounds), so a 1 GiB output compresses in the
// same memory as a 1 MiB one.
package compress

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Encoding is a content encoding by its configuration name (spec 3.4).
type Encoding string

// The encodings, by their configuration names.
const (
	Brotli Encoding = "br"
	Gzip   Encoding = "gzip"
	Zstd   Encoding = "zstd"
)

// The fixed settings. Changing one changes every compressed output: it turns
// every unchanged output of a compressing destination into a rewrite.
const (
	GzipLevel     = 8  // flate level of klauspost/compress/gzip
	BrotliQuality = 6  // brotli quality, 0..11
	BrotliLGWin   = 20 // brotli window: 1 MiB
	ZstdLevel     = zstd.SpeedBetterCompression
	ZstdWindow    = 1 << 20 // zstd window: 1 MiB
)

// gzipOS is the header's OS byte: 255, "unknown", on every machine.
const gzipOS = 255

// bufferSize is how much Copy reads between two looks at its context.
const bufferSize = 64 << 10

// Suffix is the sidecar's suffix appended to the output's path: ".br", ".gz",
// ".zst"; "" for an unknown encoding.
func (e Encoding) Suffix() string { return catalog.SidecarSuffix(e.Transform()) }

// Transform is the catalog transform of a sidecar: "brotli", "gzip", "zstd";
// "" for an unknown encoding.
func (e Encoding) Transform() string {
	switch e {
	case Brotli:
		return catalog.TransformBrotli
	case Gzip:
		return catalog.TransformGzip
	case Zstd:
		return catalog.TransformZstd
	}
	return ""
}

// NewWriter returns a writer that compresses what is written to it into dst;
// Close flushes the end of the stream and does not close dst. Whatever the
// input size, the writer holds about (measured by TestMemoryBounded on 256 MiB):
//   - gzip: 1 MiB (a 32 KiB window and the level's hash chains),
//   - br: 14 MiB (the 1 MiB ring buffer, the quality's hash tables, a block),
//   - zstd: 7 MiB (the 1 MiB window twice, the level's tables, a block).
func NewWriter(e Encoding, dst io.Writer) (io.WriteCloser, error) {
	switch e {
	case Gzip:
		w, err := gzip.NewWriterLevel(dst, GzipLevel)
		if err != nil {
			return nil, fmt.Errorf("gzip level %d: %w", GzipLevel, err)
		}
		w.Header = gzip.Header{OS: gzipOS} // no name, no time
		return w, nil
	case Brotli:
		return brotli.NewWriterOptions(dst, brotli.WriterOptions{Quality: BrotliQuality, LGWin: BrotliLGWin}), nil
	case Zstd:
		w, err := zstd.NewWriter(dst,
			zstd.WithEncoderLevel(ZstdLevel),
			zstd.WithWindowSize(ZstdWindow),
			zstd.WithEncoderConcurrency(1), // synchronous: one goroutine, one order
			zstd.WithEncoderCRC(true))
		if err != nil {
			return nil, fmt.Errorf("zstd level %v: %w", ZstdLevel, err)
		}
		return w, nil
	}
	return nil, fmt.Errorf("unknown encoding %q", string(e))
}

// A Compressor compresses with writers it keeps from one Copy to the next:
// setting up a new writer's tables costs 30-45% of the time of compressing a
// 100 KB file (brotli zeroes 14 MiB), and a reset writer gives the bytes a new
// one gives (TestDeterministic). The zero value is ready to use; a Compressor is
// not safe for concurrent use (one per worker) and holds its writers' memory
// until it is dropped.
type Compressor struct {
	writers map[Encoding]resetWriter
}

// resetWriter is what the three libraries' writers have in common.
type resetWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// writer returns c's writer for e, reset to write into dst.
func (c *Compressor) writer(e Encoding, dst io.Writer) (io.WriteCloser, error) {
	if w, ok := c.writers[e]; ok {
		w.Reset(dst)
		if g, ok := w.(*gzip.Writer); ok {
			g.Header = gzip.Header{OS: gzipOS}
		}
		return w, nil
	}
	w, err := NewWriter(e, dst)
	if err != nil {
		return nil, err
	}
	if rw, ok := w.(resetWriter); ok {
		if c.writers == nil {
			c.writers = make(map[Encoding]resetWriter)
		}
		c.writers[e] = rw
	}
	return w, nil
}

// Copy compresses src into dst with encoding e and returns the number of
// compressed bytes written to dst. It reads bufferSize bytes at a time and
// checks ctx before each (bufferSize), so a cancelled copy stops within one buffer; on
// error, what dst received is an incomplete stream to discard.
func (c *Compressor) Copy(ctx context.Context, e Encoding, dst io.Writer, src io.Reader) (int64, error) {
	cw := &countingWriter{w: dst}
	zw, err := c.writer(e, cw)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, bufferSize)
	for {
		if err := ctx.Err(); err != nil {
			return cw.n, fmt.Errorf("compress %s: %w", e, context.Cause(ctx))
		}
		n, rerr := src.Read(buf)
		if n > 0 {
			if _, err := zw.Write(buf[:n]); err != nil {
				return cw.n, fmt.Errorf("compress %s: %w", e, err)
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return cw.n, fmt.Errorf("compress %s: read: %w", e, rerr)
		}
	}
	if err := zw.Close(); err != nil {
		return cw.n, fmt.Errorf("compress %s: finish: %w", e, err)
	}
	return cw.n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
