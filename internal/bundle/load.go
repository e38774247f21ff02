package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/distributor-dev/distributor/internal/parhash"
	"github.com/distributor-dev/distributor/internal/storage"
)

// openRegular opens the bundle file p (a clean path) below root, with its info,
// refusing a symlink as p or as any parent directory, and any non-regular file.
func openRegular(root *os.Root, p string) (*os.File, fs.FileInfo, error) {
	var fi fs.FileInfo
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		prefix, last := p[:i], i == len(p)
		var err error
		fi, err = root.Lstat(prefix)
		if err != nil {
			return nil, nil, openFailed("cannot stat", err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0 && last:
			return nil, nil, &pathError{reason: "is a symlink (a bundle may hold only regular files)"}
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, nil, &pathError{reason: fmt.Sprintf("parent directory %q is a symlink", prefix)}
		case !last && !fi.IsDir():
			return nil, nil, &pathError{reason: fmt.Sprintf("missing (%q is not a directory)", prefix), err: fs.ErrNotExist}
		case last && fi.IsDir():
			return nil, nil, &pathError{reason: "is a directory, not a regular file"}
		case last && !fi.Mode().IsRegular():
			return nil, nil, &pathError{reason: fmt.Sprintf("is not a regular file (mode %s)", fi.Mode().Type())}
		}
	}
	f, err := root.Open(p)
	if err != nil {
		return nil, nil, openFailed("cannot open", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, ioReason("cannot stat", err)
	}
	if !os.SameFile(fi, st) {
		f.Close()
		return nil, nil, &pathError{reason: "changed while being opened (replaced, possibly by a symlink)"}
	}
	return f, st, nil
}

// openFailed is the problem of a bundle path that cannot be looked at.
func openFailed(what string, err error) *pathError {
	if errors.Is(err, fs.ErrNotExist) {
		return &pathError{reason: "missing", err: fs.ErrNotExist}
	}
	return ioReason(what, err)
}

// hashBuf is the copy buffer size used when hashing files.
const hashBuf = 256 << 10

// hashFile returns f's formatted SHA-256 and length, or why it is unreadable; err is ctx's.
func hashFile(ctx context.Context, f *os.File, buf []byte) (sum string, n int64, reason string, err error) {
	h := sha256.New()
	n, err = io.CopyBuffer(h, storage.ContextReader(ctx, f), buf) // stops promptly on cancellation
	switch {
	case err != nil && ctx.Err() != nil:
		return "", n, "", ctx.Err()
	case err != nil:
		return "", n, ioReason("cannot read", err).Error(), nil
	}
	return FormatSHA256(h.Sum(nil)), n, "", nil
}

// Load parses dir/manifest.json and checks the bundle against it
// (docs/bundle.md): every listed file regular, no symlink on its path, of the
// listed size and sha256. Unlisted regular files go, sorted, in Bundle.Unlisted.
// An invalid bundle (a usable file list gets its files checked too) or a
// missing directory (no hint, matching fs.ErrNotExist) is a *ValidationError
// listing every problem; other errors are wrapped with the directory.
func Load(ctx context.Context, dir string) (*Bundle, error) {
	return load(ctx, dir, true)
}

// LoadShallow is Load without reading the files' bytes (no sha256), so a run
// with nothing to write never reads them; callers VerifyFiles, or OpenVerified.
func LoadShallow(ctx context.Context, dir string) (*Bundle, error) {
	return load(ctx, dir, false)
}

// VerifyFiles hashes the listed files include accepts against the manifest
// (a *ValidationError lists every mismatch), what Load adds to LoadShallow;
// the others' bytes are checked as they are copied, with OpenVerified.
func (b *Bundle) VerifyFiles(ctx context.Context, include func(path string) bool) error {
	m := b.Manifest
	m.Files = slices.DeleteFunc(slices.Clone(m.Files), func(f File) bool { return !include(f.Path) })
	if len(m.Files) == 0 {
		return nil
	}
	root, err := os.OpenRoot(b.Dir)
	if err != nil {
		return fmt.Errorf("bundle: open directory: %w", err)
	}
	defer root.Close()
	problems, err := checkFiles(ctx, root, b.Dir, &m, true)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return &ValidationError{Dir: b.Dir, Problems: problems, Unlisted: b.Unlisted,
			Hint: sealHint(b.Dir, b.Manifest.ID, "reseal after an intended edit")}
	}
	return nil
}

func load(ctx context.Context, dir string, hash bool) (*Bundle, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, dirError(abs, err)
	}
	defer root.Close()

	m, problems, merr := loadManifest(root)
	if m == nil {
		// The file list is unusable: the manifest's problems are all.
		hint := sealHint(abs, "", "reseal after an intended edit")
		if merr == nil && problems[0].Reason == "missing" {
			hint = sealHint(abs, "", "to write it, seal the bundle")
		}
		return nil, &ValidationError{Dir: abs, Problems: problems, Err: merr, Hint: hint}
	}

	unlisted, sizes, ok, err := walkBundleFast(ctx, abs, m)
	if !ok {
		unlisted, sizes, err = walkBundle(ctx, root, m)
	}
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", abs, err)
	}
	check := m
	if !hash {
		// Shallow: a file the walk saw as a regular file of the listed size
		// needs no further look; anything else gets the full check, which
		// names the precise problem.
		check = &Manifest{Files: slices.DeleteFunc(slices.Clone(m.Files), func(f File) bool {
			size, ok := sizes[f.Path]
			return ok && size == f.Size
		})}
	}
	fileProblems, err := checkFiles(ctx, root, abs, check, hash)
	if err != nil {
		return nil, err
	}
	if problems = append(problems, fileProblems...); len(problems) > 0 {
		// Every problem at once, in path order (the manifest's among them).
		slices.SortStableFunc(problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
		return nil, &ValidationError{Dir: abs, Problems: problems, Unlisted: unlisted, Err: merr,
			Hint: sealHint(abs, m.ID, "reseal after an intended edit")}
	}
	return &Bundle{Dir: abs, Manifest: *m, Unlisted: unlisted, opener: &fileOpener{dir: abs}}, nil
}

// loadManifest parses manifest.json below root, returning its problems as the
// bundle's, an invalid one's *ManifestError, and the manifest if its file list
// is usable (see parseManifest).
func loadManifest(root *os.Root) (*Manifest, []Problem, error) {
	problem := func(reason string) (*Manifest, []Problem, error) {
		return nil, []Problem{{Path: ManifestName, Reason: reason}}, nil
	}
	f, fi, err := openRegular(root, ManifestName)
	if err != nil {
		return problem(err.Error())
	}
	defer f.Close()
	if fi.Size() > MaxManifestSize {
		return problem(fmt.Sprintf("is %d bytes, larger than the %d byte limit", fi.Size(), MaxManifestSize))
	}
	// Sized from the stat (bytes.MinRead spare, so that the read that
	// sees the end does not grow it): one allocation, not a dozen.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, MaxManifestSize+1))
	data := buf.Bytes()
	if err != nil {
		return problem(ioReason("cannot read", err).Error())
	}
	if len(data) > MaxManifestSize {
		return problem(fmt.Sprintf("is larger than the %d byte limit", MaxManifestSize))
	}
	m, merr := parseManifest(data)
	if merr == nil {
		return m, nil, nil
	}
	var problems []Problem
	for _, mp := range merr.Problems {
		problems = append(problems, Problem{Path: ManifestName, Reason: mp.String()})
	}
	return m, problems, merr
}

// checkFiles checks every listed file (its bytes too if hash) for problems.
func checkFiles(ctx context.Context, root *os.Root, abs string, m *Manifest, hash bool) ([]Problem, error) {
	// At least 8 goroutines (more reads in flight help a cold disk; hashing
	// uses every core); problems are reported in manifest order.
	workers := min(max(8, runtime.GOMAXPROCS(0)), len(m.Files))
	reasons := make([]string, len(m.Files))
	var (
		g    errgroup.Group
		next atomic.Int64
	)
	for range workers {
		g.Go(func() error {
			buf := make([]byte, hashBuf)
			for i := int(next.Add(1) - 1); i < len(m.Files) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				reasons[i] = checkFile(ctx, root, m.Files[i], buf, hash)
			}
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", abs, err)
	}
	var problems []Problem
	for i, f := range m.Files {
		if reasons[i] != "" {
			problems = append(problems, Problem{Path: f.Path, Reason: reasons[i]})
		}
	}
	return problems, nil
}

// checkFile returns why a listed file does not match, or "" (also once ctx
// is done, which the caller reports).
func checkFile(ctx context.Context, root *os.Root, want File, buf []byte, hash bool) string {
	f, fi, err := openRegular(root, want.Path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if fi.Size() != want.Size {
		return sizeMismatch(fi.Size(), want.Size)
	}
	if !hash {
		return ""
	}
	sum, n, reason, err := hashFile(ctx, f, buf)
	switch {
	case reason != "" || err != nil:
		return reason
	case n != want.Size:
		return sizeMismatch(n, want.Size) + " (the file changed while being read)"
	case sum != want.SHA256:
		return fmt.Sprintf("sha256 mismatch: manifest %s, file %s", want.SHA256, sum)
	}
	return ""
}

func sizeMismatch(got, want int64) string {
	return fmt.Sprintf("size %d does not match manifest size %d", got, want)
}

// walkBundle returns the regular files below root m does not list (sorted,
// but manifest.json) and the listed ones' sizes. An unreadable directory is
// skipped: unlisted files are warnings, listed ones not seen get the full check.
func walkBundle(ctx context.Context, root *os.Root, m *Manifest) (unlisted []string, sizes map[string]int64, err error) {
	sizes = make(map[string]int64, len(m.Files))
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if d != nil && d.IsDir() && p != "." {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || p == ManifestName {
			return nil
		}
		if _, ok := m.Lookup(p); !ok {
			unlisted = append(unlisted, p)
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			sizes[p] = fi.Size()
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(unlisted)
	return unlisted, sizes, nil
}

// open opens the listed file path, refusing a symlink on its path, anything
// not regular or outside b.Dir; OpenVerified checks the contents.
func (b *Bundle) open(path string) (*os.File, File, error) {
	want, ok := b.Manifest.Lookup(path)
	if !ok {
		return nil, File{}, fmt.Errorf("bundle %s: open %q: not listed in the manifest", b.Dir, path)
	}
	if b.opener != nil {
		if f, ok := b.opener.open(path); ok {
			return f, want, nil
		}
	}
	root, err := os.OpenRoot(b.Dir)
	if err != nil {
		return nil, File{}, fmt.Errorf("bundle: open directory: %w", err)
	}
	defer root.Close() // the opened file stays valid
	f, _, err := openRegular(root, path)
	if err != nil {
		return nil, File{}, fmt.Errorf("bundle %s: open %s: %w", b.Dir, path, err)
	}
	return f, want, nil
}

// OpenVerified opens the listed file path (as open does); the reader fails
// at once on a byte past the listed size, and at that size or the end a size
// or sha256 mismatch is a *MismatchError instead of io.EOF. A consumer that
// writes atomically thus never publishes bytes that changed since Load.
func (b *Bundle) OpenVerified(path string) (io.ReadCloser, error) {
	f, want, err := b.open(path)
	if err != nil {
		return nil, err
	}
	return &verifyingReader{f: f, src: f, want: want, dir: b.Dir, id: b.Manifest.ID, h: newDigest(want.Size)}, nil
}

// parallelDigest is the size from which a file's sha256 is computed on a
// goroutine of its own while its bytes are copied (parhash): below it the
// hand-off would cost more than it saves (bench/run big, P6).
const parallelDigest = 4 << 20

// newDigest hashes a size-byte file as bytes pass or, if large, on another core.
func newDigest(size int64) *parhash.Hash {
	if size >= parallelDigest {
		return parhash.New(sha256.New())
	}
	return parhash.Inline(sha256.New())
}

type verifyingReader struct {
	f       *os.File
	src     io.Reader // what Read verifies: f, or a copy of it (CopiedBy)
	want    File
	dir     string
	id      string // the manifest's, for the hint
	h       *parhash.Hash
	n       int64
	err     error // sticky
	checked bool  // the full content was hashed and matched
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.src.Read(p)
	v.n += int64(n)
	if v.n > v.want.Size {
		v.err = v.mismatch(fmt.Sprintf("size exceeds manifest size %d", v.want.Size))
		return 0, v.err
	}
	if n > 0 {
		v.h.Write(p[:n]) // never after the digest was taken: that needs v.n > Size
	}
	// Verify as soon as the expected size is reached, so a consumer that
	// reads exactly Size bytes (and never asks for EOF) still gets the check.
	if v.n == v.want.Size && (n > 0 || v.want.Size == 0) && !v.checked {
		v.checked = true
		if sum := FormatSHA256(v.h.Sum()); sum != v.want.SHA256 {
			v.err = v.mismatch(fmt.Sprintf("sha256 mismatch: manifest %s, file %s", v.want.SHA256, sum))
			return n, v.err
		}
	}
	if err == io.EOF {
		// At the listed size the sum was checked above.
		if v.n != v.want.Size {
			v.err = v.mismatch(sizeMismatch(v.n, v.want.Size))
			return n, v.err
		}
		v.err = io.EOF
	} else if err != nil {
		v.err = fmt.Errorf("bundle %s: read %s: %w", v.dir, v.want.Path, err)
	}
	return n, v.err
}

// CopiedBy lets a writer copy the file by other means (in the kernel, P1):
// it returns the file, at the reader's offset, and Read verifies copy, the
// copy's own bytes read back, in its place: the bytes hashed are those written.
func (v *verifyingReader) CopiedBy(copy io.Reader) *os.File { v.src = copy; return v.f }

func (v *verifyingReader) Close() error {
	v.h.Close()
	return v.f.Close()
}

func (v *verifyingReader) mismatch(reason string) error {
	return &MismatchError{Dir: v.dir, Path: v.want.Path, Reason: reason, Hint: sealHint(v.dir, v.id, "reseal after an intended edit")}
}

// MismatchError is an OpenVerified reader's error for bytes that differ from
// the manifest (changed after sealing, or since being verified).
type MismatchError struct {
	Dir    string // the bundle directory
	Path   string // the file, relative to Dir
	Reason string // e.g. "sha256 mismatch: manifest ..., file ..."
	Hint   string // what to do next, as in ValidationError.Hint
}

func (e *MismatchError) Error() string {
	hint := ""
	if e.Hint != "" {
		hint = "; " + e.Hint
	}
	return fmt.Sprintf("bundle %s: %s: %s (its bytes do not match the manifest%s)", e.Dir, e.Path, e.Reason, hint)
}

// Seek supports what a retrying writer needs: Seek(0, io.SeekCurrent), and
// Seek(0, io.SeekStart), which starts the verification over.
func (v *verifyingReader) Seek(offset int64, whence int) (int64, error) {
	switch {
	case offset == 0 && whence == io.SeekCurrent:
		return v.n, nil
	case offset == 0 && whence == io.SeekStart:
		if _, err := v.f.Seek(0, io.SeekStart); err != nil {
			return 0, fmt.Errorf("bundle %s: %s: rewind: %w", v.dir, v.want.Path, err)
		}
		v.h.Close()
		v.h = newDigest(v.want.Size)
		v.src, v.n, v.err, v.checked = v.f, 0, nil, false
		return 0, nil
	}
	return 0, fmt.Errorf("bundle %s: %s: only a rewind to the start is supported", v.dir, v.want.Path)
}

// Package bundle reads, validates and writes source bundles: a directory
// holding manifest.json and the files it lists (contract section 2,
// docs/bundle.md). ParseManifest checks a manifest, Load a bundle directory
// against it, Seal writes one, and Bundle.OpenVerified reads a listed file.

// ManifestName is the manifest's file name inside a bundle directory.
const ManifestName = "manifest.json"

// Manifest is a parsed manifest.json (schema version 1; its tags are the manifest's names).
type Manifest struct {
	SchemaVersion int       `json:"schema_version"`
	ID            string    `json:"id"`
	Created       time.Time `json:"created"`
	Digest        string    `json:"digest"` // "sha256:<64 hex>"
	Files         []File    `json:"files"`  // sorted by Path, byte-wise
}

// File is one listed bundle file (its tags are the manifest's names).
type File struct {
	Path   string `json:"path"`   // clean relative path
	SHA256 string `json:"sha256"` // "sha256:<64 hex>"
	Size   int64  `json:"size"`
}

// Bundle is a validated source bundle on disk.
type Bundle struct {
	Dir      string // absolute directory
	Manifest Manifest
	// Unlisted holds regular files present in Dir but not listed (warnings).
	Unlisted []string

	opener *fileOpener // Load's, for OpenVerified; nil: each file is opened from Dir
}

// Close releases the directories OpenVerified keeps open (its files stay
// valid; later opens are slower). Closing twice is harmless.
func (b *Bundle) Close() error {
	if b.opener != nil {
		b.opener.close()
	}
	return nil
}
