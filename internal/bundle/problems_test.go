package bundle

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// staleDigest replaces the digest of dir's manifest with another valid
// one, as a hand edit of the file list that forgot the digest leaves it.
func staleDigest(t *testing.T, dir string, m *Manifest) string {
	t.Helper()
	p := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	stale := sumOf("an older file list")
	edited := strings.Replace(string(data), m.Digest, stale, 1)
	if edited == string(data) {
		t.Fatalf("digest %s not found in %s", m.Digest, data)
	}
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return stale
}

// Issue 21.5: a missing file, a size mismatch, a wrong sha256 and a stale
// digest are listed together (the digest alone was reported, and the
// files' problems only once it was fixed).
func TestLoadListsEveryProblemAtOnce(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, sample)
	m := writeManifest(t, dir, sample)
	stale := staleDigest(t, dir, m)
	rm(t, dir, "zz/last.md")                                        // missing
	writeFiles(t, dir, map[string]string{"report.md": "# Today\n"}) // size 8, listed 11
	writeFiles(t, dir, map[string]string{"img/x.png": "GIF"})       // same size, other bytes

	digest := Problem{ManifestName, `digest "` + stale + `": does not match the listed files (computed ` + m.Digest + `)`}
	size := Problem{"report.md", "size 8 does not match manifest size 11"}
	missing := Problem{"zz/last.md", "missing"}
	for _, tt := range []struct {
		name string
		load func(context.Context, string) (*Bundle, error)
		want []Problem
	}{
		{"Load", Load, []Problem{{"img/x.png", "sha256 mismatch: manifest " + sumOf("PNG") + ", file " + sumOf("GIF")}, digest, size, missing}},
		// A shallow load reads no bytes: the sha256 is left to the copy.
		{"LoadShallow", LoadShallow, []Problem{digest, size, missing}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.load(context.Background(), dir)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T %v is not a *ValidationError", err, err)
			}
			if diff := cmp.Diff(tt.want, ve.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			var me *ManifestError
			if !errors.As(err, &me) {
				t.Errorf("errors.As(*ManifestError) failed for %v", err)
			}
			for _, p := range tt.want {
				if !strings.Contains(err.Error(), p.String()) {
					t.Errorf("Error() does not list %q:\n%s", p, err)
				}
			}
			if want := "reseal after an intended edit: distributor bundle seal " + dir + " --id test.bundle"; ve.Hint != want {
				t.Errorf("Hint = %q, want %q", ve.Hint, want)
			}
		})
	}
}

// Issue 22: the messages for a missing manifest, a missing directory and
// an edited file name the path and the next step.
func TestLoadProblemHints(t *testing.T) {
	t.Run("missing manifest", func(t *testing.T) {
		dir := newBundle(t, sample)
		rm(t, dir, ManifestName)
		_, err := Load(context.Background(), dir)
		want := "bundle " + dir + ": manifest.json: missing (to write it, seal the bundle: distributor bundle seal " + dir + " --id ID)"
		if err == nil || err.Error() != want {
			t.Errorf("Load = %v\nwant %s", err, want)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "no such bundle")
		_, err := LoadShallow(context.Background(), dir)
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("LoadShallow = %T %v, want a *ValidationError matching fs.ErrNotExist", err, err)
		}
		if want := "bundle " + dir + ": directory does not exist"; err.Error() != want {
			t.Errorf("LoadShallow = %v\nwant %s", err, want)
		}
	})
	t.Run("not a directory", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "bundle")
		writeFiles(t, filepath.Dir(file), map[string]string{"bundle": "x"})
		_, err := Load(context.Background(), file)
		if want := "bundle " + file + ": is not a directory"; err == nil || err.Error() != want {
			t.Errorf("Load = %v\nwant %s", err, want)
		}
	})
	t.Run("edited file", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "it's here")
		writeFiles(t, dir, sample)
		writeManifest(t, dir, sample)
		writeFiles(t, dir, map[string]string{"report.md": "# Tomorrow, edited\n"})
		_, err := LoadShallow(context.Background(), dir)
		want := "bundle " + dir + ": report.md: size 19 does not match manifest size 11 " +
			`(reseal after an intended edit: distributor bundle seal '` + strings.ReplaceAll(dir, "'", `'\''`) + `' --id test.bundle)`
		if err == nil || err.Error() != want {
			t.Errorf("LoadShallow = %v\nwant %s", err, want)
		}
	})
	t.Run("bytes changed while copying", func(t *testing.T) {
		dir := newBundle(t, sample)
		b, err := LoadShallow(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		writeFiles(t, dir, map[string]string{"report.md": "# Tomorrow!"})
		r, err := b.OpenVerified("report.md")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, err = io.ReadAll(r)
		var me *MismatchError
		if !errors.As(err, &me) || !strings.HasSuffix(err.Error(), "(its bytes do not match the manifest; reseal after an intended edit: distributor bundle seal "+dir+" --id test.bundle)") {
			t.Errorf("read = %v, want a *MismatchError with the reseal hint", err)
		}
	})
}
