package app

import (
	"strings"

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
// PhaseAssets).
func webWrites(primary string) func(*txn.Write) {
	return func(w *txn.Write) {
		w.Phase = writePhase(w.Path, primary)
	}
}
