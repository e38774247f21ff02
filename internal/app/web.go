package app

import (
	"strings"

	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/glob"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/txn"
)

// Write phases of a run (txn.Write.Phase): a reader of the destination
// never sees a page before the files it references, nor the primary page
// before the pages it links to.
const (
	// PhaseAssets: every output that is not an HTML page (images, CSS,
	// data files, copied sources).
	PhaseAssets = iota
	// PhaseHTML: HTML pages other than the primary page.
	PhaseHTML
	// PhasePrimary: the destination's primary page (and its archive index
	// and feed), last.
	PhasePrimary
)

// isHTML reports whether output path p is an HTML page (.html or .htm, in
// any letter case).
func isHTML(p string) bool {
	lower := strings.ToLower(p)
	return strings.HasSuffix(lower, ".html") || strings.HasSuffix(lower, ".htm")
}

// writePhase is the phase of the write of output path p, given the
// destination's primary page path (see PhaseAssets).
func writePhase(p, primary string) int {
	switch {
	case p == primary:
		return PhasePrimary
	case isHTML(p):
		return PhaseHTML
	default:
		return PhaseAssets
	}
}

// webWrites completes a run's writes for web readers: their phase (see
// PhaseAssets) and the response metadata of the first headers rule that
// matches the output path (S3 only; config rejects rules elsewhere).
func webWrites(primary string, rules []config.HeaderRule) func(*txn.Write) {
	return func(w *txn.Write) {
		w.Phase = writePhase(w.Path, primary)
		if m := metadataFor(rules, w.Path); !m.IsZero() {
			w.Options = append(w.Options, storage.WithMetadata(m))
		}
	}
}

// metadataFor returns the response metadata of the first rule whose match
// pattern matches output path p (the zero Metadata when none does).
func metadataFor(rules []config.HeaderRule, p string) storage.Metadata {
	for _, r := range rules {
		if glob.Match(r.Match, p) {
			return storage.Metadata{CacheControl: r.CacheControl, ContentType: r.ContentType, ContentDisposition: r.ContentDisposition}
		}
	}
	return storage.Metadata{}
}
