package report

import "fmt"

// Validate is the document `distributor validate` prints.
type Validate struct {
	Command      string `json:"command"`
	Config       string `json:"config"`
	Valid        bool   `json:"valid"`
	Pipelines    int    `json:"pipelines"`
	Destinations int    `json:"destinations"`
	// Source is the --source bundle, planned for every pipeline.
	Source *Source `json:"source,omitempty"`
	// Sources: without --source, the configured bundles read and planned.
	Sources  []ValidateSource  `json:"sources,omitempty"`
	Outputs  []ValidateOutputs `json:"outputs"`
	Problems []string          `json:"problems"`
	Warnings []string          `json:"warnings,omitempty"`
	// Notes say what was not checked and why; they are not problems.
	Notes []string `json:"notes,omitempty"`
}

// ValidateSource is a configured source bundle validate read and planned.
type ValidateSource struct {
	PipelineID string `json:"pipeline_id"`
	Source
}

// ValidateOutputs summarises what a bundle would publish at one destination.
type ValidateOutputs struct {
	PipelineID    string `json:"pipeline_id"`
	DestinationID string `json:"destination_id"`
	Root          string `json:"root"`
	Outputs       int    `json:"outputs"`
	PrimaryURL    string `json:"primary_url"`
}

// BundleVerify is the document `distributor bundle verify` prints.
type BundleVerify struct {
	Command  string          `json:"command"`
	Dir      string          `json:"dir"`
	Valid    bool            `json:"valid"`
	ID       string          `json:"id,omitempty"`
	Digest   string          `json:"digest,omitempty"`
	Created  string          `json:"created,omitempty"`
	Files    int             `json:"files"`
	Problems []BundleProblem `json:"problems"`
	// Hint is the next step for an invalid bundle, if any.
	Hint     string   `json:"hint,omitempty"`
	Warnings []string `json:"warnings"`
}

// BundleProblem is one reason a bundle is invalid.
type BundleProblem struct {
	// Path is the file, relative to the bundle; "" for the directory itself.
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// BundleSeal is the document `distributor bundle seal` prints.
type BundleSeal struct {
	Command  string `json:"command"`
	Dir      string `json:"dir"`
	Manifest string `json:"manifest"`
	ID       string `json:"id"`
	Digest   string `json:"digest"`
	Created  string `json:"created"`
	Files    int    `json:"files"`
}

func (s *BundleSeal) text(w *fitter) {
	fmt.Fprintf(w, "sealed %s: %d file(s), id %s\n  digest %s\n", s.Manifest, s.Files, s.ID, s.Digest)
}

// ConfigInit is the document `distributor config init` prints.
type ConfigInit struct {
	Command  string `json:"command"`
	Path     string `json:"path"`
	Replaced bool   `json:"replaced"` // an existing file was overwritten (--force)
	Named    string `json:"-"`        // the path as named, for the next step
}

func (c *ConfigInit) text(w *fitter) {
	fmt.Fprintf(w, "wrote %s: check it with 'distributor validate --config %s'\n", c.Path, c.Named)
}
