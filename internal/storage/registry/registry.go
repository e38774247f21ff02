// Package registry lists the storage backends this program links: local
// disk always, and each other backend once its public package backend/NAME
// is imported, as a database/sql driver registers itself (in package
// initialisers). The command line links every backend through backend/all;
// a program that imports only the library links no cloud SDK, SSH or FTP code.
package registry

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

// order names the backends this module provides, in the order messages, help
// and the schema list them; a program's own backends come after, by name.
var order = []string{"local", "sftp", "s3", "gcs", "azure", "ftp"}

var (
	mu       sync.RWMutex
	backends = []storage.Backend{local.Backend()}
)

// Register adds b to the backends this program links; it panics on a second
// backend of the same name, as database/sql.Register does.
func Register(b storage.Backend) {
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(backends, func(o storage.Backend) bool { return o.Name == b.Name }) {
		panic("registry: backend " + b.Name + " registered twice")
	}
	backends = append(backends, b)
	slices.SortStableFunc(backends, func(x, y storage.Backend) int {
		if c := rank(x.Name) - rank(y.Name); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
}

// rank is a backend's place in order, len(order) when it is not there.
func rank(name string) int {
	if i := slices.Index(order, name); i >= 0 {
		return i
	}
	return len(order)
}

// Unlinked returns the backends this module provides that this program did
// not link (their packages backend/NAME are not imported), in order.
func Unlinked() []string {
	var out []string
	for _, name := range order {
		if _, linked := Lookup(name); !linked {
			out = append(out, name)
		}
	}
	return out
}

// All returns the registered backends in the order messages, help and the
// configuration's schema list them.
func All() []storage.Backend {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(backends)
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

// JobsDefaults says, for help, each backend's default Jobs: "4 for local, 8
// for sftp and s3".
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

// List joins words for prose: "a", "a or b", "a, b or c" (with conj "or").
func List(words []string, conj string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}
