package app

import (
	"reflect"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage/registry"
)

// TestStoresSayNoMoreThanTheirBackend: what a backend's descriptor
// promises before a store is opened (storage.Backend.Properties, which the
// configuration checks headers against) covers what its opened stores
// say they can do.
func TestStoresSayNoMoreThanTheirBackend(t *testing.T) {
	for _, b := range faultBackends {
		kind, _, _ := strings.Cut(b.name, "-")
		be, ok := registry.Lookup(kind)
		if !ok {
			t.Fatalf("%s: no backend %q in the registry", b.name, kind)
		}
		got, want := reflect.ValueOf(b.open(t).Properties()), reflect.ValueOf(be.Properties)
		for i := range got.NumField() {
			if got.Field(i).Bool() && !want.Field(i).Bool() {
				t.Errorf("%s: the store says %s, its backend does not", b.name, got.Type().Field(i).Name)
			}
		}
	}
}
