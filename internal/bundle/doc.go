// Package bundle reads, validates and writes source bundles: a directory
// holding manifest.json and the files it lists (contract section 2).
//
// ParseManifest decodes a manifest strictly and checks every rule that needs
// no file I/O, including the content digest (ComputeDigest). Load checks a
// bundle directory against its manifest (existence, regular files, no
// symlinks, sizes, SHA-256 sums) and reports every problem at once in a
// *ValidationError. Seal writes a manifest for a directory, and
// EncodeManifest is its deterministic encoding. Bundle.OpenVerified
// gives safe, verified read access to listed files.
package bundle
