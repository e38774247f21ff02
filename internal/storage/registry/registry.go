// Package registry lists the storage backends this build supports: the
// one place that names them (as restic's internal/backend/all does). The
// configuration decodes a destination's block, and the commands open its
// store, through the storage.Backend found here; a new backend is a
// package exporting its storage.Backend and one line in All.
package registry

import (
	"fmt"
	"strings"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/azure"
	"github.com/distributor-dev/distributor/internal/storage/gcs"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/s3"
	"github.com/distributor-dev/distributor/internal/storage/sftp"
)

// All returns the backends in the order messages, help and the
// configuration's schema list them.
func All() []storage.Backend {
	return []storage.Backend{
		local.Backend(),
		sftp.Backend(),
		s3.Backend(),
		gcs.Backend(),
		azure.Backend(),
	}
}

// Lookup returns the backend named name.
func Lookup(name string) (storage.Backend, bool) {
	for _, b := range All() {
		if b.Name == name {
			return b, true
		}
	}
	return storage.Backend{}, false
}

// Names returns the backends' names, in the order of All.
func Names() []string {
	var names []string
	for _, b := range All() {
		names = append(names, b.Name)
	}
	return names
}

// JobsDefaults says how many transfers each backend runs at once by
// default (storage.Backend.Jobs), for help: "4 for local, 8 for sftp and
// s3".
func JobsDefaults() string {
	var counts []int
	names := map[int][]string{}
	for _, b := range All() {
		if names[b.Jobs] == nil {
			counts = append(counts, b.Jobs)
		}
		names[b.Jobs] = append(names[b.Jobs], b.Name)
	}
	parts := make([]string, len(counts))
	for i, n := range counts {
		parts[i] = fmt.Sprintf("%d for %s", n, List(names[n], "and"))
	}
	return strings.Join(parts, ", ")
}

// List joins words for prose: "a", "a or b", "a, b or c" (with conj
// "or").
func List(words []string, conj string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
