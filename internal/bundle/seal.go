package bundle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/distributor-dev/distributor/internal/cleanpath"
	"github.com/distributor-dev/distributor/internal/strictjson"
)

// sealTempPrefix starts Seal's temporary file next to manifest.json: reserved,
// so no bundle file has it, and Seal ignores an interrupted run's leftovers.
const sealTempPrefix = cleanpath.ReservedPrefix + "-seal-"

// Seal atomically writes dir/manifest.json listing every regular file below
// dir (but itself and an interrupted Seal's leftovers), with id and created
// (UTC, whole seconds). Symlinks, other non-regular files and unclean or
// reserved paths are a *ValidationError naming each; an invalid id, a year
// outside 0000-9999 and a directory without files are errors too.
func Seal(ctx context.Context, dir, id string, created time.Time) (*Manifest, error) {
	if err := ValidateID(id); err != nil {
		return nil, fmt.Errorf("seal bundle %s: id %s: %w", dir, strictjson.Quote(id), err)
	}
	created = created.UTC().Truncate(time.Second)
	if y := created.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("seal bundle %s: created %s: year outside 0000-9999", dir, created.Format(time.RFC3339))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("seal bundle %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		if fi, serr := os.Stat(abs); serr == nil && !fi.IsDir() {
			return nil, fmt.Errorf("seal bundle %s: not a directory: a bundle is the directory that holds the report's files", abs)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("seal bundle %s: the directory does not exist: write the report's files into it first, then seal it", abs)
		}
		return nil, fmt.Errorf("seal bundle %s: open the directory: %w", abs, err)
	}
	defer root.Close()

	paths, problems, err := sealCandidates(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("seal bundle %s: %w", abs, err)
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Dir: abs, Problems: problems}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("seal bundle %s: no files to list (a manifest must list at least one file)", abs)
	}

	m := &Manifest{SchemaVersion: SchemaVersion, ID: id, Created: created}
	buf := make([]byte, hashBuf)
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("seal bundle %s: %w", abs, err)
		}
		f, _, err := openRegular(root, p)
		if err != nil {
			problems = append(problems, Problem{Path: p, Reason: err.Error()})
			continue
		}
		sum, n, reason, err := hashFile(ctx, f, buf)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("seal bundle %s: %s: %w", abs, p, err)
		}
		if reason != "" {
			problems = append(problems, Problem{Path: p, Reason: reason})
			continue
		}
		m.Files = append(m.Files, File{Path: p, SHA256: sum, Size: n})
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Dir: abs, Problems: problems}
	}
	m.Digest = ComputeDigest(m.Files)
	data, err := EncodeManifest(m)
	if err != nil {
		return nil, fmt.Errorf("seal bundle %s: %w", abs, err)
	}
	if err := writeAtomic(root, ManifestName, data); err != nil {
		return nil, fmt.Errorf("seal bundle %s: write %s: %w", abs, ManifestName, err)
	}
	return m, nil
}

// sealCandidates returns the sorted regular files below root to list, and a
// problem for every entry that cannot be.
func sealCandidates(ctx context.Context, root *os.Root) ([]string, []Problem, error) {
	var paths []string
	var problems []Problem
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			problems = append(problems, Problem{Path: p, Reason: ioReason("cannot read", err).Error()})
			if d != nil && d.IsDir() && p != "." {
				return fs.SkipDir
			}
			return nil
		}
		if p == "." || p == ManifestName || (!strings.Contains(p, "/") && strings.HasPrefix(p, sealTempPrefix)) {
			return nil
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			problems = append(problems, Problem{Path: p, Reason: "is a symlink (a bundle may hold only regular files)"})
		case d.IsDir():
		case !t.IsRegular():
			problems = append(problems, Problem{Path: p, Reason: fmt.Sprintf("is not a regular file (mode %s)", t)})
		default:
			if err := cleanpath.CheckUnreserved(p); err != nil {
				problems = append(problems, Problem{Path: p, Reason: "cannot be listed: path " + pathReason(err)})
			} else {
				paths = append(paths, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(paths)
	slices.SortStableFunc(problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return paths, problems, nil
}

// writeAtomic replaces name below root with data: a synced temporary file
// renamed over it, then the directory synced.
func writeAtomic(root *os.Root, name string, data []byte) error {
	var rnd [8]byte
	rand.Read(rnd[:]) // never fails: it crashes the program instead
	tmp := sealTempPrefix + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return err
	}
	if d, derr := root.Open("."); derr == nil {
		// Not every platform can sync a directory; the rename is done anyway.
		_ = d.Sync()
		d.Close()
	}
	return nil
}
