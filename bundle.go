package distributor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/distributor-dev/distributor/internal/bundle"
	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/report"
)

// The documents of the bundle commands.
type (
	SealReport         = report.BundleSeal
	BundleVerifyReport = report.BundleVerify
)

// CheckBundleID reports whether id can name a bundle: 1-128 of
// [A-Za-z0-9._-], starting with a letter or digit.
func CheckBundleID(id string) error { return bundle.ValidateID(id) }

// SealBundle hashes every regular file under dir and writes
// dir/manifest.json atomically, as `distributor bundle seal` does. Symlinks
// and names reserved for distributor (.distributor*) are refused.
func SealBundle(ctx context.Context, dir, id string, created time.Time) (*SealReport, error) {
	if err := bundle.ValidateID(id); err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("bundle id %q: %v", id, err)}
	}
	m, err := bundle.Seal(ctx, dir, id, created)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(dir)
	return &report.BundleSeal{Command: "bundle seal", Dir: abs, Manifest: filepath.Join(abs, bundle.ManifestName),
		ID: m.ID, Digest: m.Digest, Created: catalog.FormatTime(m.Created), Files: len(m.Files)}, nil
}

// VerifyBundle checks dir's files and digest against its manifest, as
// `distributor bundle verify` does. Problems make the report invalid;
// unlisted files are warnings.
func VerifyBundle(ctx context.Context, dir string) *BundleVerifyReport {
	abs, _ := filepath.Abs(dir)
	rep := &report.BundleVerify{Command: "bundle verify", Dir: abs, Valid: true,
		Problems: []report.BundleProblem{}, Warnings: []string{}}
	b, err := bundle.Load(ctx, abs)
	var unlisted []string
	var ve *bundle.ValidationError
	switch {
	case errors.As(err, &ve):
		rep.Valid, rep.Hint, unlisted = false, ve.Hint, ve.Unlisted
		for _, p := range ve.Problems {
			rep.Problems = append(rep.Problems, report.BundleProblem{Path: p.Path, Reason: p.Reason})
		}
	case err != nil:
		rep.Valid = false
		rep.Problems = append(rep.Problems, report.BundleProblem{Reason: err.Error()})
	default:
		m := b.Manifest
		rep.ID, rep.Digest, rep.Created, rep.Files = m.ID, m.Digest, catalog.FormatTime(m.Created), len(m.Files)
		unlisted = b.Unlisted
	}
	// Files the manifest does not list, also beside an invalid bundle's
	// problems: one may be the file meant to be listed.
	for _, u := range unlisted {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: not listed in the manifest (ignored)", u))
	}
	return rep
}
