// Package bundle reads, validates and writes source bundles: a directory
// holding manifest.json and the files it lists (contract section 2,
// docs/bundle.md). ParseManifest checks a manifest, Load a bundle directory
// against it, Seal writes one, and Bundle.OpenVerified reads a listed file.
package bundle

import "time"

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
