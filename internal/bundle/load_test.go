package bundle

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeFiles creates the files (path -> content) below dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeManifest writes dir/manifest.json listing files (path -> content)
// with correct sizes, hashes and digest, computed independently of Seal.
func writeManifest(t *testing.T, dir string, files map[string]string) *Manifest {
	t.Helper()
	m := &Manifest{SchemaVersion: 1, ID: "test.bundle", Created: time.Date(2026, 6, 19, 12, 0, 0, 0, time.UTC)}
	for p, content := range files {
		m.Files = append(m.Files, File{Path: p, SHA256: sumOf(content), Size: int64(len(content))})
	}
	m.Digest = ComputeDigest(m.Files)
	data, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

// newBundle writes a valid bundle of files into a fresh directory.
func newBundle(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	writeManifest(t, dir, files)
	return dir
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot create symlinks here: %v", err)
	}
}

var sample = map[string]string{
	"report.md":  "# Tomorrow\n",
	"img/x.png":  "PNG",
	"a/b/c.txt":  "deep",
	"empty.txt":  "",
	"zz/last.md": "last",
}

func TestLoadValid(t *testing.T) {
	dir := newBundle(t, sample)
	b, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !filepath.IsAbs(b.Dir) {
		t.Errorf("Dir %q is not absolute", b.Dir)
	}
	var paths []string
	for _, f := range b.Manifest.Files {
		paths = append(paths, f.Path)
	}
	want := []string{"a/b/c.txt", "empty.txt", "img/x.png", "report.md", "zz/last.md"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if len(b.Unlisted) != 0 {
		t.Errorf("Unlisted = %v, want none", b.Unlisted)
	}
}

func TestLoadRelativeDir(t *testing.T) {
	dir := newBundle(t, sample)
	t.Chdir(filepath.Dir(dir))
	b, err := Load(context.Background(), filepath.Base(dir))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if b.Dir != dir {
		t.Errorf("Dir = %q, want %q", b.Dir, dir)
	}
}

// loadProblemCase is a broken bundle and the problems Load must report.
type loadProblemCase struct {
	name  string
	setup func(t *testing.T, dir string) // breaks a valid bundle of sample
	want  []Problem
}

// TestLoadProblems runs the cases of each topic in turn: listed files
// that do not match, symlinks, then all problems together and the
// manifest itself.
func TestLoadProblems(t *testing.T) {
	tests := slices.Concat(loadFileProblems(), loadSymlinkProblems(), loadManifestProblems())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newBundle(t, sample)
			tt.setup(t, dir)
			b, err := Load(context.Background(), dir)
			if err == nil {
				t.Fatalf("Load succeeded (%+v), want problems", b)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T %v is not a *ValidationError", err, err)
			}
			if ve.Dir != dir {
				t.Errorf("Dir = %q, want %q", ve.Dir, dir)
			}
			if diff := cmp.Diff(tt.want, ve.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			for _, p := range tt.want {
				if !strings.Contains(err.Error(), p.String()) {
					t.Errorf("Error() does not contain %q:\n%s", p, err)
				}
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("Error() does not name the directory: %s", err)
			}
		})
	}
}

// loadFileProblems: listed files with the wrong size or hash, missing, or
// not a regular file.
func loadFileProblems() []loadProblemCase {
	return []loadProblemCase{
		{
			name:  "size lie",
			setup: func(t *testing.T, dir string) { writeFiles(t, dir, map[string]string{"report.md": "# Tomorrow"}) },
			want:  []Problem{{"report.md", "size 10 does not match manifest size 11"}},
		},
		{
			name:  "hash lie",
			setup: func(t *testing.T, dir string) { writeFiles(t, dir, map[string]string{"report.md": "# Tomorrow!"}) },
			want: []Problem{{"report.md", "sha256 mismatch: manifest " + sumOf("# Tomorrow\n") +
				", file " + sumOf("# Tomorrow!")}},
		},
		{
			name:  "missing file",
			setup: func(t *testing.T, dir string) { rm(t, dir, "report.md") },
			want:  []Problem{{"report.md", "missing"}},
		},
		{
			name:  "missing directory",
			setup: func(t *testing.T, dir string) { rm(t, dir, "a") },
			want:  []Problem{{"a/b/c.txt", "missing"}},
		},
		{
			name: "parent is a file",
			setup: func(t *testing.T, dir string) {
				rm(t, dir, "a")
				writeFiles(t, dir, map[string]string{"a": "file"})
			},
			want: []Problem{{"a/b/c.txt", `missing ("a" is not a directory)`}},
		},
		{
			name: "directory instead of file",
			setup: func(t *testing.T, dir string) {
				rm(t, dir, "empty.txt")
				mkdir(t, dir, "empty.txt")
			},
			want: []Problem{{"empty.txt", "is a directory, not a regular file"}},
		},
	}
}

// loadSymlinkProblems: symlinked files and parent directories.
func loadSymlinkProblems() []loadProblemCase {
	return []loadProblemCase{
		{
			name: "symlink file",
			setup: func(t *testing.T, dir string) {
				rm(t, dir, "img/x.png")
				writeFiles(t, dir, map[string]string{"real.png": "PNG"})
				symlink(t, "../real.png", filepath.Join(dir, "img", "x.png"))
			},
			want: []Problem{{"img/x.png", "is a symlink (a bundle may hold only regular files)"}},
		},
		{
			name: "symlink to outside",
			setup: func(t *testing.T, dir string) {
				outside := filepath.Join(t.TempDir(), "x")
				writeFiles(t, filepath.Dir(outside), map[string]string{"x": "PNG"})
				rm(t, dir, "img/x.png")
				symlink(t, outside, filepath.Join(dir, "img", "x.png"))
			},
			want: []Problem{{"img/x.png", "is a symlink (a bundle may hold only regular files)"}},
		},
		{
			name: "symlinked directory",
			setup: func(t *testing.T, dir string) {
				if err := os.Rename(filepath.Join(dir, "img"), filepath.Join(dir, "real")); err != nil {
					t.Fatal(err)
				}
				symlink(t, "real", filepath.Join(dir, "img"))
			},
			want: []Problem{{"img/x.png", `parent directory "img" is a symlink`}},
		},
		{
			name: "symlinked deep directory",
			setup: func(t *testing.T, dir string) {
				if err := os.Rename(filepath.Join(dir, "a", "b"), filepath.Join(dir, "b")); err != nil {
					t.Fatal(err)
				}
				symlink(t, "../b", filepath.Join(dir, "a", "b"))
			},
			want: []Problem{{"a/b/c.txt", `parent directory "a/b" is a symlink`}},
		},
	}
}

// loadManifestProblems: all problems together, then a missing, symlinked
// or invalid manifest.
func loadManifestProblems() []loadProblemCase {
	return []loadProblemCase{
		{
			name: "all problems together",
			setup: func(t *testing.T, dir string) {
				rm(t, dir, "zz/last.md")
				writeFiles(t, dir, map[string]string{"report.md": "# Tomorrow", "empty.txt": "x", "extra.md": "unlisted"})
				rm(t, dir, "img/x.png")
				symlink(t, "../report.md", filepath.Join(dir, "img", "x.png"))
			},
			want: []Problem{
				{"empty.txt", "size 1 does not match manifest size 0"},
				{"img/x.png", "is a symlink (a bundle may hold only regular files)"},
				{"report.md", "size 10 does not match manifest size 11"},
				{"zz/last.md", "missing"},
			},
		},
		{
			name:  "missing manifest",
			setup: func(t *testing.T, dir string) { rm(t, dir, ManifestName) },
			want:  []Problem{{"manifest.json", "missing"}},
		},
		{
			name: "manifest is a symlink",
			setup: func(t *testing.T, dir string) {
				if err := os.Rename(filepath.Join(dir, ManifestName), filepath.Join(dir, "m.json")); err != nil {
					t.Fatal(err)
				}
				symlink(t, "m.json", filepath.Join(dir, ManifestName))
			},
			want: []Problem{{"manifest.json", "is a symlink (a bundle may hold only regular files)"}},
		},
		{
			name: "invalid manifest",
			setup: func(t *testing.T, dir string) {
				data := doc(func(s *docSpec) { s.ID = `"bad id"`; s.Files[0].Path = "../x" })
				if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: []Problem{
				{"manifest.json", `id "bad id": contains ' ' (allowed: A-Z a-z 0-9 . _ -)`},
				{"manifest.json", `files[0].path "../x": has a ".." segment`},
			},
		},
	}
}

func TestLoadInvalidManifestUnwraps(t *testing.T) {
	dir := newBundle(t, sample)
	if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"schema_version": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), dir)
	var me *ManifestError
	if !errors.As(err, &me) {
		t.Fatalf("errors.As(*ManifestError) failed for %v", err)
	}
	if len(me.Problems) != 4 { // id, created, digest, files missing
		t.Errorf("manifest problems = %v", me.Problems)
	}
}

func TestLoadUnlisted(t *testing.T) {
	dir := newBundle(t, sample)
	writeFiles(t, dir, map[string]string{"notes.txt": "x", "img/y.png": "y", "a.b": "z", "a/b/manifest.json": "{}"})
	symlink(t, "notes.txt", filepath.Join(dir, "link.txt")) // not a regular file: ignored
	mkdir(t, dir, "emptydir")
	b, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []string{"a.b", "a/b/manifest.json", "img/y.png", "notes.txt"}
	if diff := cmp.Diff(want, b.Unlisted); diff != "" {
		t.Errorf("Unlisted (-want +got):\n%s", diff)
	}

	// Unlisted files are reported alongside problems too.
	rm(t, dir, "report.md")
	_, err = Load(context.Background(), dir)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Load error = %v, want *ValidationError", err)
	}
	if diff := cmp.Diff(want, ve.Unlisted); diff != "" {
		t.Errorf("ValidationError.Unlisted (-want +got):\n%s", diff)
	}
}

func TestLoadNoDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := Load(context.Background(), missing)
	if err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing dir) = %v, want an error naming %s matching fs.ErrNotExist", err, missing)
	}
}

func TestLoadCanceled(t *testing.T) {
	dir := newBundle(t, sample)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Load(ctx, dir)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load(canceled) = %v, want context.Canceled", err)
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		t.Errorf("cancellation reported as a validation problem: %v", err)
	}
}

func TestOpen(t *testing.T) {
	dir := newBundle(t, sample)
	writeFiles(t, dir, map[string]string{"unlisted.txt": "u"})
	b, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := b.open("img/x.png")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(data) != "PNG" {
		t.Errorf("read %q, %v; want PNG", data, err)
	}

	for _, p := range []string{"unlisted.txt", "../" + filepath.Base(dir) + "/report.md", "/etc/passwd", "manifest.json", ""} {
		if f, _, err := b.open(p); err == nil {
			f.Close()
			t.Errorf("Open(%q) succeeded, want error", p)
		} else if !strings.Contains(err.Error(), "not listed in the manifest") {
			t.Errorf("Open(%q) error = %v, want 'not listed'", p, err)
		}
	}

	// A listed file replaced by a symlink after Load is refused.
	rm(t, dir, "report.md")
	symlink(t, "unlisted.txt", filepath.Join(dir, "report.md"))
	if f, _, err := b.open("report.md"); err == nil {
		f.Close()
		t.Errorf("Open(symlink) succeeded")
	} else if !strings.Contains(err.Error(), "report.md: is a symlink") {
		t.Errorf("Open(symlink) error = %v", err)
	}

	// So is a file below a directory replaced by a symlink.
	if err := os.Rename(filepath.Join(dir, "img"), filepath.Join(dir, "img2")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "img2", filepath.Join(dir, "img"))
	if f, _, err := b.open("img/x.png"); err == nil {
		f.Close()
		t.Errorf("Open below symlinked dir succeeded")
	} else if !strings.Contains(err.Error(), `parent directory "img" is a symlink`) {
		t.Errorf("Open below symlinked dir error = %v", err)
	}
}

func TestOpenVerified(t *testing.T) {
	dir := newBundle(t, sample)
	b, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) (string, error) {
		r, err := b.OpenVerified(p)
		if err != nil {
			return "", err
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		return string(data), err
	}
	if got, err := read("report.md"); err != nil || got != sample["report.md"] {
		t.Fatalf("read = %q, %v", got, err)
	}
	if got, err := read("empty.txt"); err != nil || got != "" {
		t.Fatalf("read empty = %q, %v", got, err)
	}

	writeFiles(t, dir, map[string]string{"report.md": "# Tomorrow?"}) // same size
	if _, err := read("report.md"); err == nil || !strings.Contains(err.Error(), "report.md: sha256 mismatch") {
		t.Errorf("changed content: err = %v, want sha256 mismatch", err)
	}
	writeFiles(t, dir, map[string]string{"report.md": "# Tomorrow, longer\n"})
	if _, err := read("report.md"); err == nil || !strings.Contains(err.Error(), "report.md: size exceeds manifest size 11") {
		t.Errorf("grown file: err = %v, want size error", err)
	}
	writeFiles(t, dir, map[string]string{"report.md": "#"})
	if _, err := read("report.md"); err == nil || !strings.Contains(err.Error(), "report.md: size 1 does not match manifest size 11") {
		t.Errorf("shrunk file: err = %v, want size error", err)
	}
}

func rm(t *testing.T, dir, p string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, dir, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(p)), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestOpenVerifiedRewinds: a retried upload rewinds the verifying reader to
// the start; the verification starts over, so the full bytes pass and bytes
// that changed in between still fail.
func TestOpenVerifiedRewinds(t *testing.T) {
	dir := newBundle(t, sample)
	b, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := b.OpenVerified("report.md")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	sk, ok := rc.(io.Seeker)
	if !ok {
		t.Fatal("the verifying reader cannot be rewound")
	}
	half := make([]byte, len(sample["report.md"])/2)
	if _, err := io.ReadFull(rc, half); err != nil {
		t.Fatal(err)
	}
	if n, err := sk.Seek(0, io.SeekCurrent); err != nil || n != int64(len(half)) {
		t.Fatalf("Seek(0, current) = %d, %v", n, err)
	}
	if _, err := sk.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(rc)
	if err != nil || string(all) != sample["report.md"] {
		t.Fatalf("after a rewind: %q, %v", all, err)
	}
	if _, err := sk.Seek(5, io.SeekStart); err == nil {
		t.Error("Seek to an offset other than the start succeeded")
	}
	// Bytes that change between attempts fail the next one.
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(strings.ToUpper(sample["report.md"])), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sk.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rc); err == nil {
		t.Error("changed bytes passed verification after a rewind")
	}
}

// TestOpenVerifiedLargeFile: a file large enough to be hashed on another
// core (parallelDigest) is verified like a small one: intact bytes pass,
// also after a rewind half-way, and a same-size change or a grown file
// fails.
func TestOpenVerifiedLargeFile(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", (parallelDigest+1<<20)/16)
	dir := newBundle(t, map[string]string{"big.bin": big})
	b, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	read := func(rewind bool) (string, error) {
		r, err := b.OpenVerified("big.bin")
		if err != nil {
			return "", err
		}
		defer r.Close()
		if rewind {
			if _, err := io.ReadFull(r, make([]byte, len(big)/2)); err != nil {
				return "", err
			}
			if _, err := r.(io.Seeker).Seek(0, io.SeekStart); err != nil {
				return "", err
			}
		}
		data, err := io.ReadAll(r)
		return string(data), err
	}
	for _, rewind := range []bool{false, true} {
		if got, err := read(rewind); err != nil || got != big {
			t.Fatalf("read (rewind %v): %d bytes, %v", rewind, len(got), err)
		}
	}
	writeFiles(t, dir, map[string]string{"big.bin": strings.ToUpper(big)}) // same size
	if _, err := read(false); err == nil || !strings.Contains(err.Error(), "big.bin: sha256 mismatch") {
		t.Errorf("changed content: err = %v, want sha256 mismatch", err)
	}
	writeFiles(t, dir, map[string]string{"big.bin": big + "more"})
	if _, err := read(false); err == nil || !strings.Contains(err.Error(), "big.bin: size exceeds manifest size") {
		t.Errorf("grown file: err = %v, want size error", err)
	}
}
