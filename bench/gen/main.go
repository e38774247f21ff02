// Command gen writes the data bench/run measures: `gen bundle` a sealed
// bundle of N random files (or of report text, -text), `gen root` a root of N managed outputs and its
// .distributor.json made without publishing (-files=false: the catalog only,
// which also restores a root's catalog). Content is seeded ChaCha8, so it
// neither compresses nor deduplicates, and the same flags give the same bytes.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/compress/compresstest"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "bundle":
		err = genBundle(os.Args[2:])
	case "root":
		err = genRoot(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: gen bundle -dir DIR -files N -size BYTES [-id ID] [-seed S] [-per-dir K] [-text]\n       gen root -dir DIR -outputs N [-size BYTES] [-per-dir K] [-files=false] [-pipeline P] [-destination D]")
	os.Exit(2)
}

// created is the fixed creation time of generated bundles and records.
var created = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func writeRandom(path string, size int64, rng *rand.ChaCha8, buf []byte) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, len(buf))
	sum, err := random(w, size, rng, buf)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return sum, err
}

// random writes size pseudo-random bytes to w; returns their catalog sha256.
func random(w io.Writer, size int64, rng *rand.ChaCha8, buf []byte) (string, error) {
	h := sha256.New()
	for left := size; left > 0; {
		n := min(int64(len(buf)), left)
		rng.Read(buf[:n])
		h.Write(buf[:n])
		if _, err := w.Write(buf[:n]); err != nil {
			return "", err
		}
		left -= n
	}
	return bundle.FormatSHA256(h.Sum(nil)), nil
}

func genBundle(args []string) error {
	fs := flag.NewFlagSet("bundle", flag.ExitOnError)
	dir := fs.String("dir", "", "bundle directory (created)")
	files := fs.Int("files", 1, "number of files")
	size := fs.Int64("size", 100<<10, "bytes per file")
	id := fs.String("id", "bench.bundle", "bundle id")
	seed := fs.Uint64("seed", 1, "content seed")
	perDir := fs.Int("per-dir", 100, "files per subdirectory")
	text := fs.Bool("text", false, "report text (HTML, CSV, JSON: compresstest.ReportText) instead of random bytes")
	fs.Parse(args)
	if *dir == "" || *files < 1 || *size < 0 || *perDir < 1 {
		return fmt.Errorf("bundle: need -dir, -files >= 1, -size >= 0, -per-dir >= 1")
	}
	rng := rand.NewChaCha8([32]byte{byte(*seed), byte(*seed >> 8)})
	buf := make([]byte, 1<<20)
	for i := range *files {
		p := filepath.Join(*dir, fmt.Sprintf("d%03d", i / *perDir), fmt.Sprintf("f%05d.bin", i))
		var err error
		if *text {
			p = strings.TrimSuffix(p, ".bin") + compresstest.Ext(i)
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.WriteFile(p, compresstest.ReportText(*seed, i, int(*size)), 0o644)
			}
		} else {
			_, err = writeRandom(p, *size, rng, buf)
		}
		if err != nil {
			return err
		}
	}
	_, err := bundle.Seal(context.Background(), *dir, *id, created)
	return err
}

func genRoot(args []string) error {
	fs := flag.NewFlagSet("root", flag.ExitOnError)
	dir := fs.String("dir", "", "destination root (created)")
	outputs := fs.Int("outputs", 1000, "number of managed outputs")
	size := fs.Int64("size", 100, "bytes per output file")
	perDir := fs.Int("per-dir", 100, "outputs per directory")
	files := fs.Bool("files", true, "write the output files (false: only the catalog, same records)")
	pipeline := fs.String("pipeline", "bench", "owner pipeline id")
	destination := fs.String("destination", "dst", "owner destination id")
	fs.Parse(args)
	if *dir == "" || *outputs < 0 || *size < 0 || *perDir < 1 {
		return fmt.Errorf("root: need -dir, -outputs >= 0, -size >= 0, -per-dir >= 1")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	// Names are zero-padded to at least 4 (7) digits, wider when needed so
	// that paths sort in generation order.
	dirWidth := max(4, len(fmt.Sprint(max(*outputs-1, 0) / *perDir)))
	fileWidth := max(7, len(fmt.Sprint(max(*outputs-1, 0))))
	rng := rand.NewChaCha8([32]byte{42})
	buf := make([]byte, max(*size, 1))
	src := catalog.Source{ID: "bench.seed", Digest: bundle.FormatSHA256(make([]byte, 32)), Created: created}
	// The catalog is written record by record with the streaming encoder
	// (the same bytes as catalog.Encode), so memory stays flat at any size.
	tmp := filepath.Join(*dir, catalog.FileName+".gen-tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	defer f.Close()
	enc, err := catalog.NewEncoder(f, catalog.Header{CreatedAt: created, UpdatedAt: created})
	if err != nil {
		return err
	}
	for i := range *outputs {
		p := fmt.Sprintf("d%0*d/f%0*d.bin", dirWidth, i / *perDir, fileWidth, i)
		var sum string
		if *files {
			sum, err = writeRandom(filepath.Join(*dir, filepath.FromSlash(p)), *size, rng, buf)
		} else {
			sum, err = random(io.Discard, *size, rng, buf) // the same bytes, hashed only
		}
		if err != nil {
			return err
		}
		o := catalog.Output{Path: p, PipelineID: *pipeline, DestinationID: *destination,
			Source: src, Kind: catalog.KindSource, SHA256: sum, Size: *size, CreatedAt: created, UpdatedAt: created}
		if err := enc.Add(&o); err != nil {
			return err
		}
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(*dir, catalog.FileName))
}
