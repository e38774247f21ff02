package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
	"github.com/distributor-dev/distributor/internal/storage/sftp/sftptest"
)

// seedVerifyRoot writes n outputs of size bytes (20 directories) and
// their catalog straight into the local directory root, and returns a
// configuration whose destination "site" of pipeline "mine" is there.
func seedVerifyRoot(b *testing.B, root string, n, size int) *config.Config {
	b.Helper()
	dir := b.TempDir()
	cfgPath := filepath.Join(dir, "distributor.yaml")
	if err := os.WriteFile(cfgPath, []byte(strings.Replace(verifyYAML, "path: www", "path: "+root, 1)), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.LoadEnv(cfgPath, os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)
	c := &catalog.Catalog{SchemaVersion: catalog.SchemaVersion, CreatedAt: now, UpdatedAt: now}
	for i := range n {
		p := fmt.Sprintf("d%02d/f%04d.bin", i%20, i)
		data := []byte(strings.Repeat(fmt.Sprintf("%08d", i), size/8))
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(data)
		c.Outputs = append(c.Outputs, catalog.Output{Path: p, PipelineID: "mine", DestinationID: "site",
			Source: catalog.Source{ID: "s", Digest: "sha256:" + strings.Repeat("0", 64), Created: now},
			Kind:   catalog.KindSource, SHA256: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data)), CreatedAt: now, UpdatedAt: now})
	}
	data, err := catalog.Encode(c)
	if err != nil {
		b.Fatal(err)
	}
	st, err := local.New(root)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := storage.PutIf(context.Background(), st, catalog.FileName, data, ""); err != nil {
		b.Fatal(err)
	}
	return cfg
}

// benchVerify runs verify of the n outputs with each number of jobs, and
// the quick mode. b.SetBytes makes the result a read rate.
func benchVerify(b *testing.B, a *App, cfg *config.Config, n, size int, jobs ...int) {
	for _, j := range jobs {
		b.Run(fmt.Sprintf("jobs=%d", j), func(b *testing.B) {
			b.SetBytes(int64(n * size))
			for b.Loop() {
				rep, err := a.Verify(context.Background(), cfg, VerifyOptions{
					Root: Root{Pipeline: "mine", Destination: "site"}, Jobs: j})
				if err != nil || rep.Failed() || rep.OK != n {
					b.Fatalf("verify: %+v %v", rep, err)
				}
			}
		})
	}
	b.Run("quick", func(b *testing.B) {
		for b.Loop() {
			rep, err := a.Verify(context.Background(), cfg, VerifyOptions{
				Root: Root{Pipeline: "mine", Destination: "site"}, Quick: true})
			if err != nil || rep.Failed() || rep.OK != n {
				b.Fatalf("verify: %+v %v", rep, err)
			}
		}
	})
}

// BenchmarkVerifyLocal: verify of a local root of 2,000 outputs of 16 KiB,
// one output at a time, with the default 4 jobs, and --quick.
func BenchmarkVerifyLocal(b *testing.B) {
	const n, size = 2000, 16 << 10
	cfg := seedVerifyRoot(b, filepath.Join(b.TempDir(), "www"), n, size)
	benchVerify(b, New("bench", nil), cfg, n, size, 1, 4)
}

// BenchmarkVerifySFTP: the same over the real sshd (skipped without the
// test servers' environment): 1,000 outputs of 16 KiB, one at a time and
// with the default 8 jobs.
func BenchmarkVerifySFTP(b *testing.B) {
	const n, size = 1000, 16 << 10
	login := sftptest.SSHD(b).FreshRoot(b)
	cfg := seedVerifyRoot(b, login.Root, n, size)
	opts := sftpOptions(login)
	a := New("bench", nil)
	a.Open = func(ctx context.Context, _ *config.Destination, _ string) (storage.Store, error) {
		return sftp.New(ctx, opts)
	}
	benchVerify(b, a, cfg, n, size, 1, 8)
}

// slowOpenStore adds a fixed delay before each read, as a network round
// trip does.
type slowOpenStore struct {
	storage.Store
	delay time.Duration
}

func (s slowOpenStore) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	time.Sleep(s.delay)
	return s.Store.Open(ctx, p)
}

// BenchmarkVerifyLatency: a local root of 500 outputs of 16 KiB behind a
// 2 ms delay per read (a remote server's round trip, without its CPU
// cost): what parallel reads win where latency, not hashing, dominates.
func BenchmarkVerifyLatency(b *testing.B) {
	const n, size = 500, 16 << 10
	cfg := seedVerifyRoot(b, filepath.Join(b.TempDir(), "www"), n, size)
	a := New("bench", nil)
	a.Open = func(ctx context.Context, d *config.Destination, root string) (storage.Store, error) {
		st, err := a.DefaultOpenStore(ctx, d, root)
		if err != nil {
			return nil, err
		}
		return slowOpenStore{Store: st, delay: 2 * time.Millisecond}, nil
	}
	benchVerify(b, a, cfg, n, size, 1, 8)
}
