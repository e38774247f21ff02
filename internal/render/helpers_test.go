package render

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/config"
)

var testCreated = time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)

// newBundle writes files into a temporary directory and returns the bundle
// describing them (manifest computed here, not by package bundle).
func newBundle(t *testing.T, files map[string]string) *bundle.Bundle {
	t.Helper()
	dir := t.TempDir()
	b := &bundle.Bundle{Dir: dir, Manifest: bundle.Manifest{
		SchemaVersion: 1,
		ID:            "weather.tomorrow",
		Created:       testCreated,
		Digest:        "sha256:" + hex.EncodeToString(make([]byte, 32)),
	}}
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		b.Manifest.Files = append(b.Manifest.Files, bundle.File{Path: p, SHA256: digestOf(content), Size: int64(len(content))})
	}
	sort.Slice(b.Manifest.Files, func(i, j int) bool { return b.Manifest.Files[i].Path < b.Manifest.Files[j].Path })
	return b
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// dest is a destination with publish.html on and publish.source assets.
func dest() *config.Destination {
	return &config.Destination{ID: "latest", Publish: config.Publish{HTML: true, Source: config.SourceAssets}}
}

func plan2(t *testing.T, b *bundle.Bundle, d *config.Destination) *Result {
	t.Helper()
	res, err := Plan(context.Background(), b, d, "")
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	return res
}
