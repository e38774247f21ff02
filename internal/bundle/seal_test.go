package bundle

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var created = time.Date(2026, 6, 19, 14, 0, 0, 999999999, time.FixedZone("CEST", 2*3600))

func TestSealRoundTrip(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, sample)
	m, err := Seal(context.Background(), dir, "weatherreporter.tomorrow", created)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if want := time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC); m.Created != want {
		t.Errorf("Created = %v, want %v (UTC, whole seconds)", m.Created, want)
	}
	b, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatalf("Load after Seal: %v", err)
	}
	if diff := cmp.Diff(m, &b.Manifest); diff != "" {
		t.Errorf("loaded manifest differs from sealed one (-sealed +loaded):\n%s", diff)
	}
	if len(b.Unlisted) != 0 {
		t.Errorf("Unlisted = %v", b.Unlisted)
	}
	for _, f := range m.Files {
		if want := sumOf(sample[f.Path]); f.SHA256 != want || f.Size != int64(len(sample[f.Path])) {
			t.Errorf("%s: sealed %s/%d, want %s/%d", f.Path, f.SHA256, f.Size, want, len(sample[f.Path]))
		}
	}
	if len(m.Files) != len(sample) {
		t.Errorf("sealed %d files, want %d", len(m.Files), len(sample))
	}
}

func TestSealDeterministic(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"b.md": "b", "a/z.txt": "z"})
	if _, err := Seal(context.Background(), dir, "x", created); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	// Sealing again replaces the manifest without listing it, byte for byte.
	if _, err := Seal(context.Background(), dir, "x", created.Add(-time.Nanosecond*999999999)); err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("Seal is not deterministic:\n%s\n---\n%s", first, second)
	}
	want := `{
  "schema_version": 1,
  "id": "x",
  "created": "2026-06-19T12:00:00Z",
  "digest": "` + ComputeDigest([]File{{Path: "a/z.txt", SHA256: sumOf("z")}, {Path: "b.md", SHA256: sumOf("b")}}) + `",
  "files": [
    {
      "path": "a/z.txt",
      "sha256": "` + sumOf("z") + `",
      "size": 1
    },
    {
      "path": "b.md",
      "sha256": "` + sumOf("b") + `",
      "size": 1
    }
  ]
}
`
	if diff := cmp.Diff(want, string(first)); diff != "" {
		t.Errorf("manifest.json (-want +got):\n%s", diff)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), sealTempPrefix) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestSealIgnoresOwnLeftovers(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "a", sealTempPrefix + "123.tmp": "half a manifest"})
	m, err := Seal(context.Background(), dir, "x", created)
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if len(m.Files) != 1 || m.Files[0].Path != "a.md" {
		t.Errorf("files = %+v, want only a.md", m.Files)
	}
}

func TestSealRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		id    string
		want  []Problem // when the error is a *ValidationError
		msg   string    // otherwise, a fragment of the error
	}{
		{
			name: "symlink",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"a.md": "a"})
				mkdir(t, dir, "img")
				symlink(t, "../a.md", filepath.Join(dir, "img", "link.md"))
			},
			want: []Problem{{"img/link.md", "is a symlink (a bundle may hold only regular files)"}},
		},
		{
			name: "symlinked directory",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"real/a.md": "a"})
				symlink(t, "real", filepath.Join(dir, "alias"))
			},
			want: []Problem{{"alias", "is a symlink (a bundle may hold only regular files)"}},
		},
		{
			name: "reserved names",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"a.md": "a", ".distributor.json": "{}", "x/.distributorfoo": "f"})
			},
			want: []Problem{
				{".distributor.json", `cannot be listed: path has a segment starting with ".distributor" (reserved for distributor's own files)`},
				{"x/.distributorfoo", `cannot be listed: path has a segment starting with ".distributor" (reserved for distributor's own files)`},
			},
		},
		{
			name: "unclean name",
			setup: func(t *testing.T, dir string) {
				if runtime.GOOS == "windows" {
					t.Skip("backslash is a separator on Windows")
				}
				writeFiles(t, dir, map[string]string{"a.md": "a", `back\slash.md`: "b"})
			},
			want: []Problem{{`back\slash.md`, "cannot be listed: path contains a backslash"}},
		},
		{
			name:  "bad id",
			setup: func(t *testing.T, dir string) { writeFiles(t, dir, map[string]string{"a.md": "a"}) },
			id:    "bad id",
			msg:   `id "bad id": contains ' '`,
		},
		{
			name:  "no files",
			setup: func(t *testing.T, dir string) { mkdir(t, dir, "empty") },
			msg:   "no files to list",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			id := tt.id
			if id == "" {
				id = "ok"
			}
			m, err := Seal(context.Background(), dir, id, created)
			if err == nil {
				t.Fatalf("Seal succeeded (%+v), want error", m)
			}
			if _, serr := os.Lstat(filepath.Join(dir, ManifestName)); serr == nil {
				t.Errorf("manifest.json was written despite the error")
			}
			var ve *ValidationError
			if tt.want != nil {
				if !errors.As(err, &ve) {
					t.Fatalf("error %T %v is not a *ValidationError", err, err)
				}
				if diff := cmp.Diff(tt.want, ve.Problems); diff != "" {
					t.Errorf("problems (-want +got):\n%s", diff)
				}
				return
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %v, want it to contain %q", err, tt.msg)
			}
		})
	}
}

// TestComputeDigestMatchesSha256sum checks the digest against what a producer
// gets from coreutils: sha256sum of the files in byte-wise path order, piped
// into sha256sum.
func TestComputeDigestMatchesSha256sum(t *testing.T) {
	for _, tool := range []string{"sh", "sha256sum", "sort", "xargs", "find"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not available: %v", tool, err)
		}
	}
	dir := t.TempDir()
	// Names chosen so that byte-wise order differs from directory walk order
	// and from a locale-aware sort.
	writeFiles(t, dir, map[string]string{
		"a.b": "1", "a/b": "2", "a-b": "3", "B.md": "4", "a b.txt": "5", "été.md": "6", "a/B": "7", "_x": "8",
	})
	m, err := Seal(context.Background(), dir, "x", created)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c",
		`find . -type f ! -path ./manifest.json | sed 's|^\./||' | LC_ALL=C sort | tr '\n' '\0' | xargs -0 sha256sum | sha256sum`)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("shell pipeline: %v", err)
	}
	want := "sha256:" + strings.Fields(string(out))[0]
	if m.Digest != want {
		t.Errorf("digest = %s, sha256sum pipeline gives %s", m.Digest, want)
	}
	if got := ComputeDigest(m.Files); got != want {
		t.Errorf("ComputeDigest = %s, want %s", got, want)
	}
}

// TestSealNamesAMissingOrFileDirectory: sealing a directory that does not
// exist, or a regular file, names the path and says what to do.
func TestSealNamesAMissingOrFileDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "report.md")
	writeFiles(t, dir, map[string]string{"report.md": "# r\n"})
	for p, want := range map[string]string{
		filepath.Join(dir, "missing"): "the directory does not exist: write the report's files into it first, then seal it",
		file:                          "not a directory: a bundle is the directory that holds the report's files",
	} {
		_, err := Seal(context.Background(), p, "ok", created)
		if err == nil || !strings.Contains(err.Error(), p+": "+want) {
			t.Errorf("Seal(%s) = %v, want it to name the path and say %q", p, err, want)
		}
	}
}
