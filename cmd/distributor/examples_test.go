package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/cli"
)

// TestLocalExamples runs every example whose configuration uses only the
// local backend, on a copy, exactly as the README says: the first run
// publishes, the second finds nothing to do.
func TestLocalExamples(t *testing.T) {
	configs, err := filepath.Glob("../../examples/*/distributor.yaml")
	if err != nil || len(configs) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	ran := 0
	for _, cfg := range configs {
		data, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "backend: sftp") || strings.Contains(string(data), "backend: s3") {
			continue // needs servers: run by the backend tests
		}
		ran++
		name := filepath.Base(filepath.Dir(cfg))
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, filepath.Dir(cfg), dir)
			conf := filepath.Join(dir, "distributor.yaml")

			doc := runJSON(t, "run", "--config", conf)
			published := map[any]bool{} // roots an earlier destination of this run published to
			for _, d := range destinations(doc) {
				want := "publish_new"
				if published[d["root"]] {
					want = "upsert_additive" // a root shared by several pipelines
				}
				published[d["root"]] = true
				if d["status"] != "ok" || d["action"] != want {
					t.Errorf("first run: destination %v: %v %v (%v), want %s", d["destination_id"], d["action"], d["status"], d["error"], want)
				}
			}
			doc = runJSON(t, "run", "--config", conf)
			for _, d := range destinations(doc) {
				if d["action"] != "skip_same" {
					t.Errorf("second run: destination %v: %v, want skip_same", d["destination_id"], d["action"])
				}
			}
			var out, errb bytes.Buffer
			if code := cli.Execute(context.Background(), []string{"validate", "--config", conf}, cli.Env{Stdout: &out, Stderr: &errb}); code != 0 {
				t.Errorf("validate: exit %d: %s", code, errb.String())
			}
		})
	}
	if ran == 0 {
		t.Fatal("no local example ran")
	}
}

func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	args = append(args, "--output", "json")
	code := cli.Execute(context.Background(), args, cli.Env{Stdout: &out, Stderr: &errb, Version: "test"})
	if code != 0 {
		t.Fatalf("distributor %v: exit %d\nstdout: %s\nstderr: %s", args, code, out.String(), errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, out.String())
	}
	return doc
}

func destinations(doc map[string]any) []map[string]any {
	var out []map[string]any
	for _, p := range doc["pipelines"].([]any) {
		for _, d := range p.(map[string]any)["destinations"].([]any) {
			out = append(out, d.(map[string]any))
		}
	}
	return out
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			if rel == "public" {
				return filepath.SkipDir // output of a manual quick-start run
			}
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
