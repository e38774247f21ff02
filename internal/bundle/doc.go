// Package bundle reads, validates and writes source bundles: a directory
// holding manifest.json and the files it lists (contract section 2,
// docs/bundle.md). ParseManifest checks a manifest, Load a bundle directory
// against it, Seal writes one, and Bundle.OpenVerified reads a listed file.
package bundle
